"""``queue_sending``: a queued message is sent when a lost worker's end is recorded by
the sweep (another worker), and one refused at sending is dropped and told to the tabs.
Through ``actions`` with a real ``Visitor``, the real ``Runner`` and scripted models."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from channels.layers import get_channel_layer
from django.utils import timezone

from django_agent_sessions.models import AgentRun, QueuedMessage
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.streaming.running import active_runs, lifecycle
from django_agent_sessions.streaming.visiting import actions
from tests import chat_agent
from tests.queue_helpers import Events, Open, message, runs_of, said, started_with_a_reply
from tests.scripted import streamed_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_a_lost_workers_end_recorded_by_the_sweep_sends_it(
    alice: Any, queue_tab: Open
) -> None:
    chat_agent.script(streamed_reply("First."), streamed_reply("Second."))
    tab = queue_tab()
    await actions.send_or_queue(tab, message("One", "c-1"))
    assert tab.conversation_pk is not None
    active = active_runs.local_run(tab.conversation_pk)
    assert active is not None
    assert active.task is not None
    await asyncio.wait_for(active.task, 10)
    # A run of a worker that died: its record holds the conversation until the sweep.
    dead = await store_runs.start(tab.conversation_pk, agent_name="A", lease_seconds=60)
    assert dead is not None
    events = Events(tab.conversation_pk)
    try:
        await actions.send_or_queue(tab, message("Two", "c-2"))
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
        await actions.send_or_queue(tab, message("Two", "c-2"))
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
