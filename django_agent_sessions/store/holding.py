"""Whether a conversation is held by a run: what a message sent during a reply waits on
(``WHILE_RUNNING = "interrupt"`` sends it once its run's end is recorded)."""

from __future__ import annotations

from django.utils import timezone

from django_agent_sessions.models import AgentRun
from django_agent_sessions.store.hops import hop
from django_agent_sessions.store.runs import database


@hop
def held(session_pk: int) -> bool:
    """Whether a run holds the conversation: live, or waiting for decisions. A running
    record whose lease expired (its worker died) holds nothing: the next run ends it."""
    holding = AgentRun.objects.using(database()).holding(timezone.now())
    return bool(holding.filter(session_id=session_pk).exists())
