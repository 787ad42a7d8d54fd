"""Fixtures of the SSE tests: the websocket tests' users and agents, and streams closed
after each test so that no run outlives it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.sse.client import EventStream
from tests.websocket.conftest import alice, alice_cookie, bob_cookie, use_agent  # noqa: F401


@pytest.fixture(autouse=True)
async def closing_streams() -> AsyncIterator[None]:
    yield
    for stream in list(EventStream.opened):
        await stream.close()
