"""Run records and conversations as the websocket layer uses them: one hop each.

Every function here is awaited by the consumer or a run and makes exactly one hop
through ``bridge`` into one sync function, with stale connections replaced around it
(consumers and runs outlive any request, so Django's per-request cleanup never runs for
them). Nothing here knows about websockets or the SDK.

At most one run per conversation is ``running``: a conditional unique constraint on
``AgentRun`` enforces it in the database, so it holds across worker processes. A worker
renews its run's lease while the run is alive. A ``running`` record whose lease has
expired was left by a worker that died (or hung); starting the next run marks it failed
in the same transaction, so a crash never blocks a conversation for longer than the lease.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from agents.usage import Usage
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from django_agent_sessions import bridge, serialization
from django_agent_sessions.models import AgentRun, SessionItem
from django_agent_sessions.store import conversations
from django_agent_sessions.store.conversations import History, OpenedConversation

logger = logging.getLogger(__name__)

STALE_RUN_ERROR = "The worker running this run stopped before it finished (its lease expired)."

__all__ = [
    "STALE_RUN_ERROR",
    "History",
    "OpenedConversation",
    "StartedRun",
    "find_conversation",
    "finish_run",
    "open_conversation",
    "read_history",
    "renew_lease",
    "start_run",
]


@dataclass(frozen=True)
class StartedRun:
    pk: int
    run_id: str
    # The conversation's newest item id before the run: history older than the run.
    history_item_id: int


async def open_conversation(session_id: str, *, owner_id: Any) -> OpenedConversation:
    """See ``store.conversations.open_conversation``."""
    return await bridge.run(_open_conversation, session_id, owner_id)


async def find_conversation(session_id: str, *, owner_id: Any) -> OpenedConversation | None:
    """See ``store.conversations.find_conversation``."""
    return await bridge.run(_find_conversation, session_id, owner_id)


async def read_history(
    conversation_pk: int, *, up_to_item_id: int | None, limit: int | None
) -> History:
    """See ``store.conversations.read_history``."""
    return await bridge.run(_read_history, conversation_pk, up_to_item_id, limit)


async def start_run(
    conversation_pk: int, *, agent_name: str, lease_seconds: float
) -> StartedRun | None:
    """Record a new running run, or return None if one is already running.

    A running record whose lease expired is marked failed first, in the same
    transaction, so a dead worker's run does not make the conversation busy forever.
    """
    return await bridge.run(_start_run, conversation_pk, agent_name, lease_seconds)


async def renew_lease(run_pk: int, *, lease_seconds: float) -> bool:
    """Extend a running run's lease; False if it is no longer running (taken over)."""
    return await bridge.run(_renew_lease, run_pk, lease_seconds)


async def finish_run(run_pk: int, *, status: str, usage: Usage, error: str = "") -> AgentRun | None:
    """Record how a run ended. Returns the record, or None if it was taken over."""
    return await bridge.run_to_completion(_finish_run, run_pk, status, usage, error)


@bridge.with_fresh_connections
def _open_conversation(session_id: str, owner_id: Any) -> OpenedConversation:
    return conversations.open_conversation(session_id, owner_id=owner_id)


@bridge.with_fresh_connections
def _find_conversation(session_id: str, owner_id: Any) -> OpenedConversation | None:
    return conversations.find_conversation(session_id, owner_id=owner_id)


@bridge.with_fresh_connections
def _read_history(conversation_pk: int, up_to_item_id: int | None, limit: int | None) -> History:
    return conversations.read_history(conversation_pk, up_to_item_id=up_to_item_id, limit=limit)


@bridge.with_fresh_connections
def _start_run(session_pk: int, agent_name: str, lease_seconds: float) -> StartedRun | None:
    now = timezone.now()
    with transaction.atomic():
        stale = (
            AgentRun.objects.filter(session_id=session_pk)
            .stale(now)
            .update(status=AgentRun.Status.FAILED, finished_at=now, error=STALE_RUN_ERROR)
        )
        if stale:
            logger.warning("Took over %d stale run(s) of conversation pk=%s.", stale, session_pk)
        newest = SessionItem.objects.filter(session_id=session_pk).aggregate(newest=Max("id"))
        try:
            # A savepoint, so that losing the race leaves the outer transaction usable.
            with transaction.atomic():
                run = AgentRun.objects.create(
                    session_id=session_pk,
                    agent_name=serialization.column_text(agent_name, 255),
                    started_at=now,
                    lease_expires_at=now + timedelta(seconds=lease_seconds),
                    history_item_id=newest["newest"] or 0,
                )
        except IntegrityError:
            return None
    return StartedRun(pk=run.pk, run_id=str(run.run_id), history_item_id=run.history_item_id)


@bridge.with_fresh_connections
def _renew_lease(run_pk: int, lease_seconds: float) -> bool:
    expires = timezone.now() + timedelta(seconds=lease_seconds)
    updated = AgentRun.objects.filter(pk=run_pk).running().update(lease_expires_at=expires)
    return bool(updated == 1)


@bridge.with_fresh_connections
def _finish_run(run_pk: int, status: str, usage: Usage, error: str) -> AgentRun | None:
    now = timezone.now()
    updated = (
        AgentRun.objects.filter(pk=run_pk)
        .running()
        .update(
            status=status,
            finished_at=now,
            lease_expires_at=now,
            requests=usage.requests,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=usage.total_tokens,
            error=error,
        )
    )
    if not updated:
        logger.warning("Run pk=%s was taken over before it finished as %s.", run_pk, status)
        return None
    record: AgentRun = AgentRun.objects.select_related("session").get(pk=run_pk)
    return record
