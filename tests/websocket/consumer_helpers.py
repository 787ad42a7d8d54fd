"""Helpers for the AgentSessionConsumer tests: the scripted agent's settings, its answer,
a conversation's runs, and two tabs open while a run streams."""

from __future__ import annotations

import asyncio

import pytest

from django_agent_sessions.models import AgentSession
from django_agent_sessions.streaming.running import active_runs
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.websockets import Socket

ANSWER = "Sunny in Paris today, around twenty-one degrees, with a gentle western breeze."


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_agent")


async def wait_until_idle(session_id: str) -> None:
    pk = (
        await AgentSession.objects.filter(session_id=session_id).values_list("pk", flat=True).aget()
    )
    for _ in range(200):
        if active_runs.local_run(pk) is None:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the run did not end")


async def two_tabs_mid_run(
    session_id: str, cookie: bytes, message: str
) -> tuple[Socket, Socket, asyncio.Event]:
    """Two tabs open; the first said ``message`` and its run streamed its first delta.

    The run then waits for the returned gate to be set.
    """
    gate = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=gate))
    first, second = Socket(session_id, cookie), Socket(session_id, cookie)
    await first.open()
    await second.open()
    await first.say(message)
    await first.until("text.delta")
    return first, second, gate
