"""``while_running``: with ``WHILE_RUNNING = "interrupt"``, a message sent during a reply
Stops it and is sent once its end is recorded (a running run, a run waiting for
decisions); a run that does not stop in time leaves the message ``busy``; an end the
layer lost is found in the record; a bad mode is reported (E146) and acts as ``busy``,
a bound that is not a positive number too (E012).
Through ``actions`` with a real ``Visitor``, the real ``Runner`` and scripted models."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from agents.usage import Usage
from channels.layers import get_channel_layer
from django.core.checks import Error

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.streaming import checks
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.streaming.visiting import actions, while_running
from django_agent_sessions.streaming.visiting.visitor import Visitor
from django_agent_sessions.streaming.wire.frames import BadFrame
from tests import approval_agent, chat_agent
from tests.scripted import streamed_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

Open = Callable[..., Visitor]


@pytest.fixture
async def visitor(alice: Any, session_id: str, use_agent: Any) -> AsyncIterator[Open]:
    """``visitor(**settings)``: alice on the test's id, messages interrupting replies."""

    def make(**extra: Any) -> Visitor:
        use_agent("tests.chat_agent.make_payment_agent", WHILE_RUNNING="interrupt", **extra)
        scope = {"type": "websocket"}
        return Visitor(alice, session_id, scope=scope, channel_layer=get_channel_layer())

    yield make
    for active in active_runs.local_runs():  # a run a failing test left going
        active.cancel()
        if active.task is not None:
            await asyncio.wait([active.task], timeout=10)


def message(text: str, client_id: str = "c-0") -> dict[str, Any]:
    return {"type": "user_message", "text": text, "client_id": client_id}


async def statuses(visitor: Visitor) -> list[str]:
    found = AgentRun.objects.filter(session_id=visitor.conversation_pk).order_by("pk")
    return [status async for status in found.values_list("status", flat=True)]


async def finished(visitor: Visitor) -> None:
    assert visitor.conversation_pk is not None
    active = active_runs.local_run(visitor.conversation_pk)
    assert active is not None
    assert active.task is not None
    await asyncio.wait_for(active.task, 10)


async def first_token(visitor: Visitor) -> None:
    """Until the conversation's run streams its first text."""
    assert visitor.conversation_pk is not None
    events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    watcher = f"test-while-running.{uuid.uuid4().hex}"
    fanout.watch(visitor.conversation_pk, watcher, lambda m: events.put_nowait(m["event"]))
    try:
        while (await asyncio.wait_for(events.get(), 10))["type"] != "text.delta":
            pass
    finally:
        fanout.unwatch(watcher)


async def test_a_message_during_a_reply_stops_it_and_is_sent(alice: Any, visitor: Open) -> None:
    never = asyncio.Event()  # the first reply would go on forever
    chat_agent.script(streamed_reply("A long answer.", gate=never), streamed_reply("Second."))
    tab = visitor()
    await actions.send_message(tab, message("One"))
    await first_token(tab)  # the model is writing the first reply
    await actions.send_message(tab, message("Two", client_id="c-2"))
    await finished(tab)
    assert await statuses(tab) == ["cancelled", "completed"]
    record = await AgentRun.objects.order_by("pk").alast()
    assert record is not None
    assert record.client_id == "c-2"
    items: list[Any] = await DjangoSession(tab.session_id, owner=alice).get_items()
    said = [(item["role"], item["content"]) for item in items if item.get("role") == "user"]
    assert said == [("user", "One"), ("user", "Two")]
    assert items[-1]["role"] == "assistant"


async def test_a_message_ends_a_run_waiting_for_decisions_and_is_sent(visitor: Open) -> None:
    calls = streamed_reply("", tool_calls=approval_agent.two_payments())
    chat_agent.script(calls, streamed_reply("Nothing paid."))
    tab = visitor()
    await actions.send_message(tab, message("Pay Ann and Bob"))
    await finished(tab)  # its task ended: the run waits for decisions
    assert await statuses(tab) == ["waiting"]
    await actions.send_message(tab, message("Never mind"))
    await finished(tab)
    assert await statuses(tab) == ["cancelled", "completed"]
    assert approval_agent.EXECUTED == []


async def test_a_run_that_does_not_stop_in_time_leaves_the_message_busy(
    visitor: Open,
) -> None:
    chat_agent.script(streamed_reply("Done."))
    tab = visitor(INTERRUPT_SECONDS=0.3, FOLLOW_CHECK_SECONDS=0.1)
    await actions.send_message(tab, message("One"))
    await finished(tab)
    assert tab.conversation_pk is not None
    # A run of a worker that hangs: its lease renewed, nobody answers its Stop.
    hung = await store_runs.start(tab.conversation_pk, agent_name="A", lease_seconds=60)
    assert hung is not None
    with pytest.raises(BadFrame) as refused:
        await actions.send_message(tab, message("Two", client_id="c-2"))
    assert (refused.value.code, refused.value.client_id) == ("busy", "c-2")
    assert await statuses(tab) == ["completed", "running"]


async def test_an_end_the_layer_lost_is_read_from_the_record(visitor: Open) -> None:
    chat_agent.script(streamed_reply("Done."))
    tab = visitor(FOLLOW_CHECK_SECONDS=0.1)
    await actions.send_message(tab, message("One"))
    await finished(tab)
    assert tab.conversation_pk is not None
    silent = await store_runs.start(tab.conversation_pk, agent_name="A", lease_seconds=60)
    assert silent is not None

    async def end_without_telling() -> None:  # as if the layer lost both copies
        await store_runs.finish(silent.pk, status="cancelled", usage=Usage())

    layer = get_channel_layer()
    ended = await while_running.stop_then_wait(layer, tab.conversation_pk, end_without_telling)
    assert ended is True
    assert await statuses(tab) == ["completed", "cancelled"]


async def test_without_a_run_the_message_is_sent_at_once(visitor: Open) -> None:
    chat_agent.script(streamed_reply("First."), streamed_reply("Second."))
    tab = visitor()
    await actions.send_message(tab, message("One"))
    await finished(tab)
    await actions.send_message(tab, message("Two"))
    await finished(tab)
    assert await statuses(tab) == ["completed", "completed"]


def test_a_bad_mode_is_reported_and_acts_as_busy(settings: Any) -> None:
    settings.AGENT_SESSIONS = {"WHILE_RUNNING": "later"}
    found = [m for m in checks.check_streaming_settings() if m.id == "django_agent_sessions.E146"]
    assert len(found) == 1
    assert isinstance(found[0], Error)
    assert "'later'" in found[0].msg
    assert (while_running.mode(), while_running.interrupts()) == ("busy", False)
    for good in ("busy", "interrupt", "queue"):
        settings.AGENT_SESSIONS = {"WHILE_RUNNING": good}
        assert while_running.check() == []
        assert while_running.mode() == good
    settings.AGENT_SESSIONS = {}
    assert while_running.mode() == "busy"  # the default
    settings.AGENT_SESSIONS = {"INTERRUPT_SECONDS": 0}
    ids = [m.id for m in checks.check_streaming_settings()]
    assert "django_agent_sessions.E012" in ids  # the wait's bound is a positive number
