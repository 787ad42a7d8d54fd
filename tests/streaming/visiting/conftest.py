"""The visiting tests' shared fixture: a visitor whose messages are queued during replies."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import get_channel_layer

from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.streaming.visiting.visitor import Visitor
from tests.queue_helpers import Open


@pytest.fixture
async def queue_tab(alice: Any, session_id: str, use_agent: Any) -> AsyncIterator[Open]:
    """``queue_tab(user=alice)``: a visitor on the test's id, messages queued during replies."""
    use_agent("tests.chat_agent.make_agent", WHILE_RUNNING="queue")

    def make(user: Any = alice) -> Visitor:
        scope = {"type": "websocket"}
        return Visitor(user, session_id, scope=scope, channel_layer=get_channel_layer())

    yield make
    for active in active_runs.local_runs():  # a run a failing test left going
        active.cancel()
        if active.task is not None:
            await asyncio.wait([active.task], timeout=10)
