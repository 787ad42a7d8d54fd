"""Fixtures of the ChatKit adapter's tests: the websocket tests' users and agents."""

from __future__ import annotations

from tests.websocket.conftest import alice, alice_cookie, bob_cookie, use_agent  # noqa: F401
