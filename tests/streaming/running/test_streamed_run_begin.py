"""How a ``StreamedRun`` begins: the SDK's run (``SdkRun``) starts before the run's first
events are sent, and a run the SDK refuses to start is announced, then fails."""

from __future__ import annotations

import asyncio

import pytest

from django_agent_sessions import DjangoSession
from django_agent_sessions.streaming.running.streamed_run import StreamedRun
from tests.scripted import streamed_reply
from tests.streaming.running.test_streamed_run import make_agent

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_sdk_begins_while_the_first_events_are_still_being_sent(session_id):
    """The person's message is saved (and the model called) while the run's first event
    is still with its reader: a run in a task worker spends round trips to Redis on it."""
    session = DjangoSession(session_id)
    run = StreamedRun(make_agent(streamed_reply("Hi")), "Hello", run_id="r", session=session)
    events = run.events()
    started = await events.__anext__()  # and held here, as a slow publish would hold it
    assert started["type"] == "run.started"

    async def saved() -> None:
        while not await session.get_items():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(saved(), 30)
    assert (await session.get_items())[0] == {"role": "user", "content": "Hello"}
    rest = [event async for event in events]
    assert [e["type"] for e in rest][:1] == ["item.completed"]
    assert rest[-1]["type"] == "run.completed"


async def test_a_run_the_sdk_refuses_to_begin_is_announced_then_fails(session_id):
    run = StreamedRun(make_agent(streamed_reply("Hi")), "Hello", run_id="r")
    run.spending = "not RunHooks"  # the SDK checks its hooks before it starts
    events = run.events()
    assert [(await events.__anext__())["type"] for _ in range(2)] == [
        "run.started",
        "item.completed",
    ]
    with pytest.raises(Exception, match=r"(?i)hooks"):
        await events.__anext__()
