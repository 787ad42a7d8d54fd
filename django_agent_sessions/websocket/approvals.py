"""Tool calls that wait for a person: the run records' approval operations.

(Longer than 300 lines: each of its six operations has an async half and a sync half.)

A run whose tool calls need approval pauses: ``pause_run`` stores the SDK's own
serialisation of the run (``RunState.to_string()``) on its ``AgentRun``, marks it
``waiting`` and records one ``ToolApproval`` per call. Nothing else holds the run: no
task, no connection, no worker. A ``waiting`` run holds its conversation like a running
one (the same conditional unique constraint), so a new message gets ``busy``.

``decide`` records one decision with a conditional ``UPDATE ... WHERE decision IS NULL``:
of two tabs deciding one call at once, the database lets exactly one count. The decision
that leaves no call pending also claims the run (``waiting`` -> ``running``, in the same
transaction) and returns what the caller needs to resume it, on whichever worker that is.

``end_waiting`` ends a waiting run as cancelled (on request, or because it expired),
rejects its pending calls and stores a rejection output for each call the conversation
holds, so the history stays valid for the next run (a call without its output makes
every later model request fail).

Each async function is one whole operation: one hop through ``bridge`` into the sync
function of the same name with a leading underscore (tests call those directly).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from agents.tool import DEFAULT_APPROVAL_REJECTION_MESSAGE
from django.db import router, transaction
from django.db.models import F, Max
from django.db.models.functions import Coalesce
from django.utils import timezone

from django_agent_sessions import bridge, serialization
from django_agent_sessions.conf import app_settings
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem, ToolApproval
from django_agent_sessions.retention import parse_duration
from django_agent_sessions.store import health
from django_agent_sessions.store import items as store_items
from django_agent_sessions.websocket.paused import RequestedCall

logger = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 2000
WAITING = AgentRun.Status.WAITING
RUNNING = AgentRun.Status.RUNNING
# ToolApproval.reason of a call rejected because its run ended without a decision.
EXPIRED = "expired"
CANCELLED = "cancelled"


@dataclass(frozen=True)
class PendingApproval:
    """A call waiting for a decision, as the ``history`` frame lists it."""

    run_id: str
    call_id: str
    name: str
    arguments: str
    seq: int  # of the run's last event, so a socket numbers the resumed run's events
    expires_at: str  # ISO 8601

    def wire(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "call_id": self.call_id,
            "name": self.name,
            "arguments": self.arguments,
            "expires_at": self.expires_at,
        }


@dataclass(frozen=True)
class Resume:
    """What a worker needs to resume a run whose calls are all decided."""

    run_pk: int
    run_id: str
    agent_name: str
    state: str
    seq: int
    history_item_id: int
    # call_id -> (approved, rejection message or "")
    decisions: dict[str, tuple[bool, str]]


@dataclass(frozen=True)
class Decided:
    run_id: str
    call_id: str
    approve: bool
    resume: Resume | None = None


@dataclass(frozen=True)
class Ended:
    """A waiting run that was ended: the calls rejected and the last event's seq."""

    run_pk: int
    run_id: str
    seq: int
    call_ids: list[str] = field(default_factory=list)


def approval_timeout() -> timedelta:
    return parse_duration(app_settings.APPROVAL_TIMEOUT)


async def pause_run(
    run_pk: int,
    *,
    state: str,
    seq: int,
    calls: Sequence[RequestedCall],
    usage: dict[str, int],
) -> datetime | None:
    """See ``_pause_run``."""
    return await bridge.run_to_completion(
        lambda: _pause_run(run_pk, state=state, seq=seq, calls=calls, usage=usage)
    )


async def decide(
    session_pk: int,
    call_id: str,
    *,
    approve: bool,
    message: str,
    user_id: Any,
    lease_seconds: float,
) -> Decided | None:
    """See ``_decide``."""
    return await bridge.run_to_completion(
        lambda: _decide(
            session_pk,
            call_id,
            approve=approve,
            message=message,
            user_id=user_id,
            lease_seconds=lease_seconds,
        )
    )


async def end_waiting(session_pk: int, *, reason: str, only_overdue: bool = False) -> Ended | None:
    """See ``_end_waiting``."""
    return await bridge.run_to_completion(
        lambda: _end_waiting(session_pk, reason=reason, only_overdue=only_overdue)
    )


async def pending_approvals(session_pk: int) -> list[PendingApproval]:
    """See ``_pending_approvals``."""
    return await bridge.run(_pending_approvals, session_pk)


async def overdue(session_pk: int) -> bool:
    """See ``_overdue``."""
    return await bridge.run(_overdue, session_pk)


async def summary(run_pk: int) -> list[dict[str, Any]]:
    """See ``_summary``."""
    return await bridge.run(_summary, run_pk)


async def finished_record(run_pk: int) -> AgentRun:
    """The run record, with its conversation, for ``run_finished`` receivers."""
    return await bridge.run(_finished_record, run_pk)


@health.with_fresh_connections
def _finished_record(run_pk: int) -> AgentRun:
    record: AgentRun = AgentRun.objects.select_related("session").get(pk=run_pk)
    return record


@health.with_fresh_connections
def _pause_run(
    run_pk: int,
    *,
    state: str,
    seq: int,
    calls: Sequence[RequestedCall],
    usage: dict[str, int],
) -> datetime | None:
    """Park a running run on ``calls``; returns its expiry, or None if it is not running
    any more (it was taken over)."""
    now = timezone.now()
    expires = now + approval_timeout()
    with transaction.atomic(using=router.db_for_write(AgentRun)):
        updated = AgentRun.objects.filter(pk=run_pk, status=RUNNING).update(
            status=WAITING,
            state=state,
            event_seq=seq,
            waited_at=Coalesce(F("waited_at"), now),
            approval_expires_at=expires,
            lease_expires_at=now,
            **usage,
        )
        if not updated:
            return None
        ToolApproval.objects.bulk_create(
            [
                ToolApproval(
                    run_id=run_pk,
                    call_id=serialization.column_text(call.call_id, 255),
                    name=serialization.column_text(call.name, 255),
                    arguments=call.arguments,
                    requested_at=now,
                )
                for call in calls
            ]
        )
    return expires


@health.with_fresh_connections
def _decide(
    session_pk: int,
    call_id: str,
    *,
    approve: bool,
    message: str,
    user_id: Any,
    lease_seconds: float,
) -> Decided | None:
    """Record a decision on a pending call of the conversation's waiting run.

    None when there is no such pending call: unknown, already decided (here or by a
    concurrent tab), or its run is no longer waiting (ended, expired). Nothing is written
    then. When this decision is the run's last, the run is claimed for resuming.
    """
    now = timezone.now()
    candidate = (
        ToolApproval.objects.filter(
            run__session_id=session_pk,
            run__status=WAITING,
            call_id=call_id,
            decision__isnull=True,
        )
        .values("pk", "run_id", "run__approval_expires_at")
        .first()
    )
    if candidate is None:
        return None
    expires = candidate["run__approval_expires_at"]
    if expires is not None and expires < now:
        _end_waiting(session_pk, reason=EXPIRED, only_overdue=True)
        return None
    run_pk = candidate["run_id"]
    with transaction.atomic(using=router.db_for_write(AgentRun)):
        # The first statement writes: the database decides which of two tabs counts.
        claimed = ToolApproval.objects.filter(pk=candidate["pk"], decision__isnull=True).update(
            decision=ToolApproval.Decision.APPROVED if approve else ToolApproval.Decision.REJECTED,
            message="" if approve else message[:MAX_MESSAGE_CHARS],
            decided_by_id=user_id,
            decided_at=now,
        )
        if not claimed:
            return None
        # Serialises the deciders of one run (row lock on PostgreSQL), so that exactly
        # one of two concurrent last decisions sees no call pending and resumes.
        still_waiting = AgentRun.objects.filter(pk=run_pk, status=WAITING).update(
            lease_expires_at=now
        )
        if not still_waiting:
            transaction.set_rollback(True)
            return None
        run = AgentRun.objects.get(pk=run_pk)
        if ToolApproval.objects.filter(run_id=run_pk, decision__isnull=True).exists():
            return Decided(str(run.run_id), call_id, approve)
        AgentRun.objects.filter(pk=run_pk).update(
            status=RUNNING,
            state="",
            approval_expires_at=None,
            lease_expires_at=now + timedelta(seconds=lease_seconds),
        )
        decisions = {
            row.call_id: (row.decision == ToolApproval.Decision.APPROVED, row.message)
            for row in ToolApproval.objects.filter(run_id=run_pk)
        }
        # What a socket joining the resumed run reads from the history: everything
        # stored before it resumed (the run's first part included).
        newest = SessionItem.objects.filter(session_id=session_pk).aggregate(newest=Max("id"))
    resume = Resume(
        run_pk=run_pk,
        run_id=str(run.run_id),
        agent_name=run.agent_name,
        state=run.state,
        seq=run.event_seq,
        history_item_id=newest["newest"] or 0,
        decisions=decisions,
    )
    return Decided(str(run.run_id), call_id, approve, resume)


@health.with_fresh_connections
def _summary(run_pk: int) -> list[dict[str, Any]]:
    """How each call of a run that waited was decided: for ``run_finished`` receivers."""
    rows = ToolApproval.objects.filter(run_id=run_pk).select_related("decided_by")
    return [
        {
            "call_id": row.call_id,
            "name": row.name,
            "arguments": row.arguments,
            "decision": row.decision,
            "reason": row.reason,
            "decided_by": row.decided_by,
            "requested_at": row.requested_at,
            "decided_at": row.decided_at,
        }
        for row in rows.order_by("pk")
    ]


@health.with_fresh_connections
def _pending_approvals(session_pk: int) -> list[PendingApproval]:
    """The calls of the conversation's waiting run that wait for a decision."""
    rows = ToolApproval.objects.filter(
        run__session_id=session_pk, run__status=WAITING, decision__isnull=True
    ).values_list(
        "run__run_id", "call_id", "name", "arguments", "run__event_seq", "run__approval_expires_at"
    )
    return [
        PendingApproval(
            str(run_id), call_id, name, arguments, seq, expires.isoformat() if expires else ""
        )
        for run_id, call_id, name, arguments, seq, expires in rows.order_by("pk")
    ]


@health.with_fresh_connections
def _overdue(session_pk: int) -> bool:
    """Whether the conversation's waiting run is past its expiry."""
    return bool(
        AgentRun.objects.filter(
            session_id=session_pk, status=WAITING, approval_expires_at__lt=timezone.now()
        ).exists()
    )


@health.with_fresh_connections
def _end_waiting(session_pk: int, *, reason: str, only_overdue: bool = False) -> Ended | None:
    """End the conversation's waiting run as cancelled, its pending calls rejected.

    ``only_overdue``: only if it is past its expiry. None when there was nothing to end
    (no waiting run, or another worker ended or resumed it first).
    """
    now = timezone.now()
    using = router.db_for_write(AgentRun)
    with transaction.atomic(using=using):
        run = (
            AgentRun.objects.filter(session_id=session_pk, status=WAITING)
            .values("pk", "run_id", "event_seq", "approval_expires_at")
            .first()
        )
        if run is None:
            return None
        if only_overdue and (run["approval_expires_at"] or now) >= now:
            return None
        ended = AgentRun.objects.filter(pk=run["pk"], status=WAITING).update(
            status=AgentRun.Status.CANCELLED,
            state="",
            finished_at=now,
            lease_expires_at=now,
            approval_expires_at=None,
        )
        if not ended:
            return None
        pending = list(
            ToolApproval.objects.filter(run_id=run["pk"], decision__isnull=True).values_list(
                "call_id", flat=True
            )
        )
        ToolApproval.objects.filter(run_id=run["pk"], decision__isnull=True).update(
            decision=ToolApproval.Decision.REJECTED, reason=reason, decided_at=now
        )
        _store_rejections(session_pk, run["pk"], using=using)
    return Ended(run["pk"], str(run["run_id"]), run["event_seq"], pending)


def _store_rejections(session_pk: int, run_pk: int, *, using: str) -> None:
    """A rejection output for every call of the run the conversation holds without one."""
    call_ids = list(ToolApproval.objects.filter(run_id=run_pk).values_list("call_id", flat=True))
    stored = SessionItem.objects.filter(session_id=session_pk, call_id__in=call_ids)
    calls = set(stored.filter(item_type="function_call").values_list("call_id", flat=True))
    answered = set(stored.exclude(item_type="function_call").values_list("call_id", flat=True))
    missing = [call_id for call_id in call_ids if call_id in calls - answered]
    if not missing:
        return
    outputs = [
        {"type": "function_call_output", "call_id": call_id, "output": REJECTION_OUTPUT}
        for call_id in missing
    ]
    session_id = AgentSession.objects.values_list("session_id", flat=True).get(pk=session_pk)
    encoded = serialization.encode_items(
        outputs, max_bytes=app_settings.MAX_ITEM_BYTES, max_depth=app_settings.MAX_ITEM_DEPTH
    )
    store_items.append_items(store_items.Scope(session_id, None, using), encoded, "")


REJECTION_OUTPUT = DEFAULT_APPROVAL_REJECTION_MESSAGE
