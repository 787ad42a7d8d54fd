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
from django_agent_sessions.store import conversations, health
from django_agent_sessions.store.conversations import History, OpenedConversation

logger = logging.getLogger(__name__)

STALE_RUN_ERROR = "The worker running this run stopped before it finished (its lease expired)."
WORKER_LOST = "worker_lost"
# Most expired runs one sweep marks; the next sweep takes the rest.
_EXPIRE_BATCH = 50

__all__ = [
    "STALE_RUN_ERROR",
    "WORKER_LOST",
    "ExpiredRun",
    "History",
    "OpenedConversation",
    "StartedRun",
    "expire_stale_runs",
    "expired_record",
    "find_conversation",
    "finish_run",
    "open_conversation",
    "read_history",
    "renew_lease",
    "start_run",
]


@dataclass(frozen=True)
class ExpiredRun:
    """A run whose worker died, marked failed (``worker_lost``) by this caller."""

    pk: int
    run_id: str
    session_pk: int
    owner_id: Any


@dataclass(frozen=True)
class StartedRun:
    pk: int
    run_id: str
    # The conversation's newest item id before the run: history older than the run.
    history_item_id: int
    # Runs of the conversation whose lease had expired, marked failed on the way.
    expired: tuple[ExpiredRun, ...] = ()


async def open_conversation(session_id: str, *, owner_id: Any) -> OpenedConversation:
    """See ``store.conversations.open_conversation``."""
    return await bridge.run(_open_conversation, session_id, owner_id)


async def find_conversation(session_id: str, *, owner_id: Any) -> OpenedConversation | None:
    """See ``store.conversations.find_conversation``."""
    return await bridge.run(_find_conversation, session_id, owner_id)


async def read_history(
    conversation_pk: int,
    *,
    up_to_item_id: int | None,
    limit: int | None,
    max_chars: int | None = None,
    before_id: int | None = None,
) -> History:
    """See ``store.conversations.read_history``."""
    return await bridge.run(
        _read_history, conversation_pk, up_to_item_id, limit, max_chars, before_id
    )


async def start_run(
    conversation_pk: int, *, agent_name: str, lease_seconds: float, client_id: str = ""
) -> StartedRun | None:
    """Record a new running run, or return None if one is already running.

    A running record whose lease expired is marked failed first, in the same
    transaction, so a dead worker's run does not make the conversation busy forever
    (``StartedRun.expired`` lists them, for the caller to announce).
    """
    return await bridge.run(_start_run, conversation_pk, agent_name, lease_seconds, client_id)


async def expire_stale_runs(conversation_pk: int | None = None) -> list[ExpiredRun]:
    """Mark running runs whose lease expired as failed (``worker_lost``).

    Their worker died (or hung past its lease). Each run is claimed by one conditional
    UPDATE, so when several workers sweep at once, exactly one of them marks (and
    announces) each run.
    """
    return await bridge.run(_expire_stale_runs, conversation_pk)


async def expired_record(run_pk: int) -> AgentRun:
    """The record of an expired run (with its conversation and owner), for signals."""
    return await bridge.run(_expired_record, run_pk)


async def renew_lease(run_pk: int, *, lease_seconds: float) -> bool:
    """Extend a running run's lease; False if it is no longer running (taken over)."""
    return await bridge.run(_renew_lease, run_pk, lease_seconds)


async def finish_run(
    run_pk: int,
    *,
    status: str,
    usage: Usage,
    error: str = "",
    error_code: str = "",
    partial_text: str = "",
) -> AgentRun | None:
    """Record how a run ended. Returns the record, or None if it was taken over.

    ``partial_text`` is the assistant text a stopped or failed run had streamed of a
    reply it never saved; history shows it with the run's status.
    """
    return await bridge.run_to_completion(
        _finish_run, run_pk, status, usage, error, error_code, partial_text
    )


@health.with_fresh_connections
def _open_conversation(session_id: str, owner_id: Any) -> OpenedConversation:
    return conversations.open_conversation(session_id, owner_id=owner_id)


@health.with_fresh_connections
def _find_conversation(session_id: str, owner_id: Any) -> OpenedConversation | None:
    return conversations.find_conversation(session_id, owner_id=owner_id)


@health.with_fresh_connections
def _read_history(
    conversation_pk: int,
    up_to_item_id: int | None,
    limit: int | None,
    max_chars: int | None,
    before_id: int | None,
) -> History:
    return conversations.read_history(
        conversation_pk,
        up_to_item_id=up_to_item_id,
        limit=limit,
        max_chars=max_chars,
        before_id=before_id,
    )


@health.with_fresh_connections
def _start_run(
    session_pk: int, agent_name: str, lease_seconds: float, client_id: str = ""
) -> StartedRun | None:
    now = timezone.now()
    with transaction.atomic():
        expired = _expire(now, session_pk)
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
                    client_id=serialization.column_text(client_id, 64),
                )
        except IntegrityError:
            return None
    return StartedRun(
        pk=run.pk,
        run_id=str(run.run_id),
        history_item_id=run.history_item_id,
        expired=tuple(expired),
    )


@health.with_fresh_connections
def _expire_stale_runs(session_pk: int | None) -> list[ExpiredRun]:
    return _expire(timezone.now(), session_pk)


def _expire(now: Any, session_pk: int | None) -> list[ExpiredRun]:
    stale = AgentRun.objects.stale(now)
    if session_pk is not None:
        stale = stale.filter(session_id=session_pk)
    candidates = list(
        stale.values_list("pk", "run_id", "session_id", "session__owner_id")[:_EXPIRE_BATCH]
    )
    expired = []
    for pk, run_id, run_session_pk, owner_id in candidates:
        newest = SessionItem.objects.filter(session_id=run_session_pk).aggregate(n=Max("id"))
        claimed = (
            AgentRun.objects.filter(pk=pk)
            .stale(now)
            .update(
                status=AgentRun.Status.FAILED,
                finished_at=now,
                error=STALE_RUN_ERROR,
                error_code=WORKER_LOST,
                last_item_id=newest["n"] or 0,
            )
        )
        if claimed:
            logger.warning("Run %s lost its worker (lease expired); marked failed.", run_id)
            expired.append(ExpiredRun(pk, str(run_id), run_session_pk, owner_id))
    return expired


@health.with_fresh_connections
def _expired_record(run_pk: int) -> AgentRun:
    record: AgentRun = AgentRun.objects.select_related("session", "session__owner").get(pk=run_pk)
    return record


@health.with_fresh_connections
def _renew_lease(run_pk: int, lease_seconds: float) -> bool:
    expires = timezone.now() + timedelta(seconds=lease_seconds)
    updated = AgentRun.objects.filter(pk=run_pk).running().update(lease_expires_at=expires)
    return bool(updated == 1)


@health.with_fresh_connections
def _finish_run(
    run_pk: int, status: str, usage: Usage, error: str, error_code: str, partial_text: str
) -> AgentRun | None:
    now = timezone.now()
    conversation = AgentRun.objects.filter(pk=run_pk).values_list("session_id", flat=True)
    last_item = SessionItem.objects.filter(session_id__in=conversation).aggregate(n=Max("id"))
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
            error_code=error_code[:32],
            partial_text=serialization.column_text(partial_text, len(partial_text)),
            last_item_id=last_item["n"] or 0,
        )
    )
    if not updated:
        logger.warning("Run pk=%s was taken over before it finished as %s.", run_pk, status)
        return None
    record: AgentRun = AgentRun.objects.select_related("session").get(pk=run_pk)
    return record
