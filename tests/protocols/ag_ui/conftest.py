"""Fixtures of the AG-UI tests: the websocket tests' users and agents, and requests
closed after each test so that no run outlives it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.protocols.ag_ui.live import server  # noqa: F401 - the live tests' daphne
from tests.protocols.ag_ui.requests import AgUiRequest
from tests.sse.client import EventStream
from tests.websocket.conftest import alice, alice_cookie, bob_cookie, use_agent  # noqa: F401


@pytest.fixture(autouse=True)
async def closing_requests() -> AsyncIterator[None]:
    yield
    for request in list(AgUiRequest.opened):
        await request.close()
    for stream in list(EventStream.opened):  # the chat's streams some tests open beside
        await stream.close()


@pytest.fixture(autouse=True)
def agent_settings(use_agent):  # noqa: F811 - the fixture imported above
    use_agent("tests.chat_agent.make_payment_agent")
