"""``queueing``: with ``WHILE_RUNNING = "queue"``, a message sent during a reply is
stored and told as queued, then sent as an ordinary run when the reply's end is
recorded, in order, once; a reload's history frame lists it; its owner edits or removes
it, nobody else; without a reply it is sent at once (``test_queue_sending.py``: ends
recorded elsewhere, refusals).
Through ``actions`` with a real ``Visitor``, the real ``Runner`` and scripted models."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from django_agent_sessions.models import QueuedMessage
from django_agent_sessions.streaming.following import history
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.streaming.visiting import actions, queueing
from django_agent_sessions.streaming.wire.frames import BadFrame
from tests import chat_agent
from tests.queue_helpers import Open, answered, message, runs_of, said, started_with_a_reply
from tests.scripted import streamed_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_messages_sent_during_a_reply_are_sent_after_it_in_order(
    alice: Any, queue_tab: Open
) -> None:
    gate = asyncio.Event()
    tab = queue_tab()
    events = await started_with_a_reply(tab, gate)
    try:
        await actions.send_from_chat(tab, message("Two", "c-2"))
        await actions.send_from_chat(tab, message("Three", "c-3"))
        told = [e for e in await events.until("conversation.queue", 2)]
        queue = [e for e in told if e["type"] == "conversation.queue"][-1]["queued"]
        assert [(m["text"], m["client_id"]) for m in queue] == [("Two", "c-2"), ("Three", "c-3")]
        gate.set()
        await events.until("end", 3)
    finally:
        events.close()
    assert await runs_of(tab) == [("completed", "c-1"), ("completed", "c-2"), ("completed", "c-3")]
    assert await said(alice, tab) == ["One", "Two", "Three"]
    assert not await QueuedMessage.objects.aexists()


@pytest.fixture
def mallory(make_user: Callable[[str], Any]) -> Any:
    return make_user("mallory")


async def test_a_reload_shows_the_queue_and_its_owner_edits_or_removes(
    alice: Any, queue_tab: Open, mallory: Any
) -> None:
    gate = asyncio.Event()
    tab = queue_tab()
    events = await started_with_a_reply(tab, gate)
    try:
        await actions.send_from_chat(tab, message("Tow", "c-2"))
        await actions.send_from_chat(tab, message("Never mind", "c-3"))
        assert tab.conversation_pk is not None
        frames: list[dict[str, Any]] = []

        async def keep(frame: dict[str, Any]) -> None:
            frames.append(frame)

        # A reload during the reply: the history frame lists the queue.
        loaded = await history.load(tab.conversation_pk, up_to_item_id=None)
        active = active_runs.local_run(tab.conversation_pk)
        assert active is not None
        await history.send_frame(keep, tab.conversation_pk, loaded, {"run_id": active.run_id})
        two, three = frames[0]["queued"]
        assert (two["text"], three["text"]) == ("Tow", "Never mind")
        # Someone else (their visitor brought to this conversation): nothing to touch.
        other = queue_tab(mallory)
        other.conversation_pk = tab.conversation_pk
        for action, content in (
            (queueing.edit, {"id": two["id"], "text": "Mine"}),
            (queueing.remove, {"id": two["id"]}),
        ):
            with pytest.raises(BadFrame) as refused:
                await action(other, content)
            assert refused.value.code == "unknown_queued"
        await queueing.edit(tab, {"id": two["id"], "text": "Two"})
        await queueing.remove(tab, {"id": three["id"]})
        told = [e for e in await events.until("conversation.queue", 4)]
        last = [e for e in told if e["type"] == "conversation.queue"][-1]["queued"]
        assert [m["text"] for m in last] == ["Two"]
        gate.set()
        await events.until("end", 2)
    finally:
        events.close()
    assert await said(alice, tab) == ["One", "Two"]
    with pytest.raises(BadFrame):  # sent: not queued any more
        await queueing.remove(tab, {"id": two["id"]})


async def test_without_a_reply_the_message_is_sent_at_once(queue_tab: Open) -> None:
    chat_agent.script(streamed_reply("First."))
    await answered(queue_tab())
    assert not await QueuedMessage.objects.aexists()


async def test_the_protocol_adapters_path_stays_busy(queue_tab: Open) -> None:
    """``send_message`` (the adapters' call) queues nothing: their clients know no queue."""
    gate = asyncio.Event()
    tab = queue_tab()
    events = await started_with_a_reply(tab, gate)
    try:
        with pytest.raises(BadFrame) as refused:
            await actions.send_message(tab, message("Two", "c-2"))
        assert (refused.value.code, refused.value.client_id) == ("busy", "c-2")
        gate.set()
        await events.until("end")
    finally:
        events.close()
    assert not await QueuedMessage.objects.aexists()
