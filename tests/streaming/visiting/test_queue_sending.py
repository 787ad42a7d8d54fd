"""``queue_sending``: a queued message is sent when a lost worker's end is recorded by
the sweep (another worker), and one refused at sending is dropped and told to the tabs;
one left waiting (its send never happened) goes before the next message, or is sent
when a tab opens the conversation; a process that must not host runs sends nothing.
Through ``actions`` with a real ``Visitor``, the real ``Runner`` and scripted models."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from channels.layers import get_channel_layer
from django.utils import timezone

from django_agent_sessions import layers
from django_agent_sessions.apps import send_queued
from django_agent_sessions.models import AgentRun, QueuedMessage
from django_agent_sessions.store import queued
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.streaming.following import history
from django_agent_sessions.streaming.running import active_runs, lifecycle
from django_agent_sessions.streaming.visiting import actions, queue_sending
from django_agent_sessions.streaming.visiting.visitor import Visitor
from tests import chat_agent
from tests.queue_helpers import (
    Events,
    Open,
    answered,
    message,
    runs_of,
    said,
    started_with_a_reply,
)
from tests.scripted import streamed_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_a_lost_workers_end_recorded_by_the_sweep_sends_it(
    alice: Any, queue_tab: Open
) -> None:
    chat_agent.script(streamed_reply("First."), streamed_reply("Second."))
    tab = queue_tab()
    session_pk = await answered(tab)
    # A run of a worker that died: its record holds the conversation until the sweep.
    dead = await store_runs.start(session_pk, agent_name="A", lease_seconds=60)
    assert dead is not None
    events = Events(session_pk)
    try:
        await actions.send_from_chat(tab, message("Two", "c-2"))
        await events.until("conversation.queue")
        past = timezone.now() - timedelta(seconds=1)
        await AgentRun.objects.filter(pk=dead.pk).aupdate(lease_expires_at=past)
        assert await lifecycle.expire_lost(get_channel_layer()) == 1  # the sweep
        await events.until("end", 2)  # the lost run's, then the queued message's
    finally:
        events.close()
    assert await runs_of(tab) == [("completed", "c-1"), ("failed", ""), ("completed", "c-2")]
    assert await said(alice, tab) == ["One", "Two"]


async def test_a_message_refused_at_sending_is_dropped_and_told(
    queue_tab: Open, settings: Any
) -> None:
    gate = asyncio.Event()
    tab = queue_tab()
    events = await started_with_a_reply(tab, gate)
    try:
        await actions.send_from_chat(tab, message("Two", "c-2"))
        await events.until("conversation.queue")
        settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "AGENT": "tests.chat_agent.broken"}
        gate.set()
        told = await events.until("conversation.queue")
    finally:
        events.close()
    refused = told[-1]
    assert refused["queued"] == []
    assert refused["refused"]["text"] == "Two"
    assert (refused["refused"]["client_id"], refused["refused"]["code"]) == ("c-2", "unavailable")
    assert not await QueuedMessage.objects.aexists()


async def left_waiting(tab: Visitor, text: str, client_id: str) -> None:
    """A first reply ended, and a message queued whose send never happened (the process
    that recorded the end died, or could not host the run)."""
    chat_agent.script(streamed_reply("First."), streamed_reply("Second."), streamed_reply("3."))
    session_pk = await answered(tab)
    assert await queued.keep(session_pk, tab.owner_id, text, client_id) is not None


async def test_a_message_left_waiting_goes_before_the_next_one(alice: Any, queue_tab: Open) -> None:
    tab = queue_tab()
    await left_waiting(tab, "Two", "c-2")
    assert tab.conversation_pk is not None
    events = Events(tab.conversation_pk)
    try:
        await actions.send_from_chat(tab, message("Three", "c-3"))  # queued behind "Two"
        await events.until("end", 2)
    finally:
        events.close()
    assert await said(alice, tab) == ["One", "Two", "Three"]


async def test_a_tab_opening_the_conversation_sends_what_was_left_waiting(
    alice: Any, queue_tab: Open
) -> None:
    tab = queue_tab()
    await left_waiting(tab, "Two", "c-2")
    assert tab.conversation_pk is not None
    events = Events(tab.conversation_pk)
    try:
        loaded = await history.load(tab.conversation_pk, up_to_item_id=None)
        shown: list[dict[str, Any]] = []

        async def keep(frame: dict[str, Any]) -> None:
            shown.append(frame)

        await history.send_frame(keep, tab.conversation_pk, loaded, None)
        assert [m["text"] for m in shown[0]["queued"]] == ["Two"]  # shown, then sent
        await events.until("end")
    finally:
        events.close()
    assert await runs_of(tab) == [("completed", "c-1"), ("completed", "c-2")]


async def test_a_process_that_must_not_host_runs_sends_nothing(queue_tab: Open) -> None:
    tab = queue_tab()
    await left_waiting(tab, "Two", "c-2")
    session_pk = tab.conversation_pk
    assert session_pk is not None
    layer = get_channel_layer()

    async def in_the_sweep_command() -> str | None:
        with queue_sending.hosting_no_runs():
            return await queue_sending.send_next(layer, session_pk)

    assert await in_the_sweep_command() is None
    assert await QueuedMessage.objects.acount() == 1  # still queued
    assert await queue_sending.send_next(layer, session_pk) is not None
    assert not await QueuedMessage.objects.aexists()
    active = active_runs.local_run(session_pk)
    assert active is not None
    assert active.task is not None
    await asyncio.wait_for(active.task, 10)


async def test_outside_queue_mode_a_run_s_end_builds_nothing(
    settings: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Every recorded end calls it (run_finished): in another mode not even the layer.
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "WHILE_RUNNING": "busy"}

    def no_layer() -> None:
        raise AssertionError("the stream layer was built")

    monkeypatch.setattr(layers, "stream_layer", no_layer)
    monkeypatch.setattr(queue_sending, "stream_layer", no_layer)
    await send_queued(sender=None, run=SimpleNamespace(session_id=1))  # the receiver
    assert caplog.records == []
