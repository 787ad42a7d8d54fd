"""The workers' sweep (``running.lost``) also removes the temporary chats that are due:
past ``TEMPORARY_TTL``, with nobody's command needed."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from channels.layers import get_channel_layer
from django.utils import timezone

from django_agent_sessions.models import AgentSession
from django_agent_sessions.streaming.running.lost import LostRunSweeper

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_worker_with_tabs_removes_temporary_chats_past_their_ttl(settings):
    settings.AGENT_SESSIONS = {"SWEEP_SECONDS": 0.05, "TEMPORARY_TTL": "1h"}
    long_ago = timezone.now() - timedelta(hours=2)
    for session_id, temporary in (("idle", True), ("kept", False), ("fresh", True)):
        await AgentSession.objects.acreate(session_id=session_id, temporary=temporary)
    await AgentSession.objects.exclude(session_id="fresh").aupdate(updated_at=long_ago)
    sweeper = LostRunSweeper()
    sweeper.acquire(get_channel_layer())
    try:
        for _ in range(100):
            if not await AgentSession.objects.filter(session_id="idle").aexists():
                break
            await asyncio.sleep(0.05)
    finally:
        sweeper.release()
    remaining = [row async for row in AgentSession.objects.values_list("session_id", flat=True)]
    assert sorted(remaining) == ["fresh", "kept"]
