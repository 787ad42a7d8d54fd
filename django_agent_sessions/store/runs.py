"""Run records: starting, renewing, ending and losing a run, each in one transaction.
At most one run per conversation is ``running`` or ``waiting``: a conditional unique
constraint on ``AgentRun`` enforces it in the database, so it holds across worker
processes. A worker renews its run's lease while the run is alive; a ``running`` record
whose lease expired was left by a worker that died (or hung), and is ended as lost.

**One lock order** for every transition of a run, here and in ``store.approvals``: the
conversation row first (a no-op UPDATE: the row lock on PostgreSQL, the write lock on
SQLite), then the run row, then its approval rows, then the items. Two transitions of
one conversation therefore wait for each other instead of deadlocking.

**No end without a valid history.** Whatever ends a run (completed or not), the same
transaction stores an output for each of its function calls that the conversation holds
without one (``open_calls.close_open_calls``), with a text that says how the run ended.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from agents.usage import Usage
from django.db import IntegrityError, connections, router, transaction
from django.db.models import Max, Subquery
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from django_agent_sessions import serialization
from django_agent_sessions.exceptions import ConversationGone
from django_agent_sessions.models import AgentRun, SessionItem
from django_agent_sessions.store import conversations, open_calls
from django_agent_sessions.store.hops import hop
from django_agent_sessions.store.run_items import end_record, with_item_ids
from django_agent_sessions.store.usage import (
    NOTHING,
    Spent,
    first_model,
    grown,
    usage_counts,
    write_spent,
)

logger = logging.getLogger(__name__)

STALE_RUN_ERROR = "The worker running this run stopped before it finished (its lease expired)."
WORKER_LOST = "worker_lost"
# Most lost runs one sweep ends; the next sweep takes the rest.
_EXPIRE_BATCH = 50


@dataclass(frozen=True)
class ExpiredRun:
    """A run whose worker died, ended as failed (``worker_lost``) by this caller."""

    pk: int
    run_id: str
    session_pk: int
    owner_id: Any
    seq: int = 0  # of its last event its worker noted (at its last lease renewal)


class Writable(Protocol):
    """A row to write with a new run, in its transaction (``store.orders.Order``)."""

    def write(self, run_pk: int, using: str) -> None: ...


@dataclass(frozen=True)
class StartedRun:
    pk: int
    run_id: str
    # The conversation's newest item id before the run: history older than the run.
    history_item_id: int
    # Runs of the conversation whose lease had expired, ended on the way.
    expired: tuple[ExpiredRun, ...] = ()


def lock_conversation(session_pk: int, using: str) -> bool:
    """The first lock of every transition (see the module's lock order); False if the
    conversation is gone."""
    return bool(conversations.lock_conversations(connections[using], [session_pk], before=None))


def database() -> str:
    return router.db_for_write(AgentRun)


@hop
def start(
    session_pk: int,
    *,
    agent_name: str,
    lease_seconds: float,
    client_id: str = "",
    order: Writable | None = None,
) -> StartedRun | None:
    """Record a new running run (with its ``order``), or None if the conversation has one.

    A running record whose lease expired is ended as lost first, in the same
    transaction (``StartedRun.expired`` lists them, for the caller to announce).
    ``ConversationGone`` if the conversation was deleted since the caller found it.
    """
    now, using = timezone.now(), database()
    with transaction.atomic(using=using):
        if not lock_conversation(session_pk, using):
            raise ConversationGone(f"Conversation pk={session_pk} was deleted.")
        expired = _expire(now, session_pk, using)
        newest = SessionItem.objects.filter(session_id=session_pk).aggregate(newest=Max("id"))
        try:
            # A savepoint, so that losing the race leaves the outer transaction usable.
            with transaction.atomic(using=using):
                run = create_record(
                    session_pk, now, agent_name, lease_seconds, client_id, newest["newest"] or 0
                )
                if order is not None:  # for a task (``store.orders``)
                    order.write(run.pk, using)
        except IntegrityError:
            return None
    return StartedRun(run.pk, str(run.run_id), run.history_item_id, tuple(expired))


def create_record(
    session_pk: int, now: datetime, agent_name: str, lease: float, client_id: str, history: int
) -> AgentRun:
    """A ``running`` record; ``IntegrityError`` if the conversation has a run already."""
    run = new_record(now, agent_name, lease, client_id, history)
    run.session_id = session_pk
    run.save(force_insert=True, using=database())
    return run


def new_record(
    now: datetime, agent_name: str, lease: float, client_id: str, history: int = 0
) -> AgentRun:
    """A ``running`` record not saved yet, of no conversation yet."""
    return AgentRun(
        agent_name=serialization.column_text(agent_name, 255),
        started_at=now,
        lease_expires_at=now + timedelta(seconds=lease),
        history_item_id=history,
        client_id=serialization.column_text(client_id, 64),
    )


@hop
def expire_stale(session_pk: int | None = None) -> list[ExpiredRun]:
    """End running runs whose lease expired as failed (``worker_lost``).

    Their worker died (or hung past its lease). Each run is claimed by one conditional
    UPDATE, so when several workers sweep at once, exactly one of them ends (and
    announces) each run.
    """
    return _expire(timezone.now(), session_pk, database())


def _expire(now: datetime, session_pk: int | None, using: str) -> list[ExpiredRun]:
    stale = AgentRun.objects.stale(now)
    if session_pk is not None:
        stale = stale.filter(session_id=session_pk)
    candidates = stale.values_list("pk", "run_id", "session_id", "session__owner_id", "event_seq")
    expired = []
    for pk, run_id, run_session_pk, owner_id, seq in list(candidates[:_EXPIRE_BATCH]):
        # One transaction per run: never two conversations' locks at once.
        with transaction.atomic(using=using):
            lock_conversation(run_session_pk, using)
            claimed = (
                AgentRun.objects.filter(pk=pk)
                .stale(now)
                .update(
                    status=AgentRun.Status.FAILED,
                    finished_at=now,
                    error=STALE_RUN_ERROR,
                    error_code=WORKER_LOST,
                )
            )
            if claimed:
                _close_and_mark_last(run_session_pk, pk, using, text=open_calls.LOST_CALL)
        if claimed:
            logger.warning("Run %s lost its worker (lease expired); marked failed.", run_id)
            expired.append(ExpiredRun(pk, str(run_id), run_session_pk, owner_id, seq))
    return expired


@hop
def record(run_pk: int) -> AgentRun:
    """The run record, with its conversation and owner, for ``run_finished`` receivers."""
    runs = AgentRun.objects.select_related("session", "session__owner")
    found: AgentRun = with_item_ids(runs).get(pk=run_pk)
    return found


@hop
def note_trace(run_pk: int, trace_id: str) -> None:
    """Store the id of the run's trace (OpenTelemetry's 32 hex digits; see ``telemetry``)."""
    AgentRun.objects.filter(pk=run_pk).update(trace_id=trace_id[:32])


@hop
def trace_of(run_pk: int) -> tuple[str, datetime | None]:
    """The run's trace id ("" if none) and when it first waited for approvals."""
    found = AgentRun.objects.filter(pk=run_pk).values_list("trace_id", "waited_at").first()
    return found if found is not None else ("", None)


@hop
def renew_lease(run_pk: int, *, lease_seconds: float, seq: int = 0, spent: Spent = NOTHING) -> bool:
    """Extend a running run's lease and note its last event's ``seq`` (numbering the end
    of a run whose worker dies) and what it spent so far (kept if it dies); False if it
    is no longer running (taken over)."""
    expires = timezone.now() + timedelta(seconds=lease_seconds)
    running = AgentRun.objects.filter(pk=run_pk).running()
    fields = {"lease_expires_at": expires, "event_seq": Greatest("event_seq", seq)}
    if not spent.by_model:  # one UPDATE: the usual renewal
        return bool(running.update(**fields, **spent.run_fields()) == 1)
    with transaction.atomic(using=database()):
        if running.update(**fields, **spent.run_fields()) != 1:
            return False
        write_spent(run_pk, spent)
    return True


@hop(write=True)
def finish(
    run_pk: int,
    *,
    status: str,
    usage: Usage,
    spent: Spent = NOTHING,
    error: str = "",
    error_code: str = "",
    partial_text: str = "",
    outputs: Mapping[str, Any] | None = None,
    open_call_text: str = "",
    session_pk: int | None = None,
) -> AgentRun | None:
    """Record how a running run ended; the record, or None if it was taken over or
    deleted with its conversation meanwhile (retention, the admin).

    ``partial_text`` is the assistant text a stopped or failed run had streamed of a
    reply it never saved (history shows it with the run's status). ``outputs``: the
    tool outputs the run produced, by call id, for its calls left without a stored one.
    ``spent``: each model's share since the run's last write. ``session_pk``: the run's
    conversation, when the caller knows it (else one query more).
    """
    now, using = timezone.now(), database()
    session_pk = session_pk or conversations.conversation_of(run_pk)
    if session_pk is None:  # deleted with its conversation meanwhile
        return None
    with transaction.atomic(using=using):
        lock_conversation(session_pk, using)
        updated = (
            AgentRun.objects.filter(pk=run_pk)
            .running()
            .update(
                status=status,
                finished_at=now,
                lease_expires_at=now,
                **grown(usage_counts(usage)),
                error=error,
                error_code=error_code[:32],
                partial_text=serialization.column_text(partial_text, len(partial_text)),
                state="",  # a paused state is for resuming: an ended run has none
                **first_model(spent),
            )
        )
        if not updated:
            if AgentRun.objects.filter(pk=run_pk).exists():  # else deleted meanwhile
                logger.warning("Run pk=%s was taken over before it ended as %s.", run_pk, status)
            return None
        write_spent(run_pk, spent, model_set=True)
        stopped = status == str(AgentRun.Status.CANCELLED)
        text = open_call_text or (open_calls.STOPPED_CALL if stopped else open_calls.FAILED_CALL)
        _close_and_mark_last(session_pk, run_pk, using, text=text, outputs=outputs)
    # With the item ids its end names and whether a title is wanted: the same query.
    found: AgentRun = end_record().get(pk=run_pk)
    return found


def _close_and_mark_last(
    session_pk: int, run_pk: int, db: str, *, text: str, outputs: Mapping[str, Any] | None = None
) -> None:
    open_calls.close_open_calls(session_pk, run_pk, db, text=text, outputs=outputs)
    mark_last_item(session_pk, run_pk)


def mark_last_item(session_pk: int, run_pk: int) -> None:
    """The run's items end here: the conversation's newest item (one UPDATE)."""
    newest = SessionItem.objects.filter(session_id=session_pk).order_by("-id").values("id")[:1]
    AgentRun.objects.filter(pk=run_pk).update(last_item_id=Coalesce(Subquery(newest), 0))
