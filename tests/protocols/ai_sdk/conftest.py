"""Fixtures of the AI SDK adapter's tests: the websocket tests' users and agents, and
the live server of the Node and browser tests (started once per module that asks)."""

from __future__ import annotations

from tests.browser import browser  # noqa: F401
from tests.protocols.ai_sdk.live import chat_server  # noqa: F401
from tests.websocket.conftest import alice, alice_cookie, bob_cookie, use_agent  # noqa: F401
