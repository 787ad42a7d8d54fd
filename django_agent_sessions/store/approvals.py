"""Tool calls that wait for a person: a run's pause, the decisions, its end unresolved.

A run whose tool calls need approval pauses: ``pause`` stores the SDK's own
serialisation of the run (``RunState.to_string()``) on its ``AgentRun``, marks it
``waiting`` and records one ``ToolApproval`` per call. Nothing else holds the run: no
task, no connection, no worker. A ``waiting`` run holds its conversation like a running
one (the same conditional unique constraint), so a new message gets ``busy``.

``decide`` records one decision with a conditional ``UPDATE ... WHERE decision IS NULL``:
of two tabs deciding one call at once, the database lets exactly one count. The decision
that leaves no call pending also claims the run (``waiting`` -> ``running``, in the same
transaction) and returns what the caller needs to resume it, on whichever worker that is.

``end_waiting`` ends a waiting run as cancelled (on request, or past its expiry) with
its pending calls rejected and an output for each call. Every transaction here follows
``store.runs``'s lock order: conversation, run, approvals, items.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Max
from django.db.models.functions import Coalesce
from django.utils import timezone

from django_agent_sessions import serialization
from django_agent_sessions.models import (
    REJECTED_CANCELLED,
    REJECTED_EXPIRED,
    AgentRun,
    RunOrder,
    SessionItem,
    ToolApproval,
)
from django_agent_sessions.store.conversations import conversation_of
from django_agent_sessions.store.hops import hop
from django_agent_sessions.store.open_calls import (
    NOT_RESUMED_CALL,
    REJECTION_OUTPUT,
    close_open_calls,
)
from django_agent_sessions.store.runs import database as _using
from django_agent_sessions.store.runs import lock_conversation, mark_last_item
from django_agent_sessions.store.usage import NOTHING, Spent, grown, write_spent

MAX_MESSAGE_CHARS = 2000
WAITING = AgentRun.Status.WAITING
RUNNING = AgentRun.Status.RUNNING
# ToolApproval.reason of a call rejected because its run ended without a decision.
EXPIRED = REJECTED_EXPIRED
CANCELLED = REJECTED_CANCELLED
__all__ = ["REJECTION_OUTPUT"]


@dataclass(frozen=True)
class RequestedCall:
    """A tool call that needs approval, as the paused run reports it."""

    call_id: str
    name: str
    arguments: str  # JSON text, as the model wrote it
    description: str = ""  # what the tool does, as the agent describes it


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
    execution: int = 0  # handed off: the number of the execution a task claims


@dataclass(frozen=True)
class Decided:
    run_id: str
    call_id: str
    approve: bool
    seq: int  # of its ``approval.resolved``: a decision is one of the run's events
    resume: Resume | None = None


@dataclass(frozen=True)
class Ended:
    """A waiting run that was ended: the calls rejected (their ``approval.resolved``
    numbered ``seq + 1`` on, in this order) and the seq of the event before them."""

    run_pk: int
    run_id: str
    seq: int
    call_ids: list[str] = field(default_factory=list)


@hop(write=True)
def pause(
    run_pk: int,
    *,
    state: str,
    seq: int,
    calls: Sequence[RequestedCall],
    usage: dict[str, int],
    timeout: timedelta,
    spent: Spent = NOTHING,
) -> datetime | None:
    """Park a running run on ``calls`` for ``timeout``; returns its expiry, or None if it
    is not running any more (it was taken over)."""
    now, using = timezone.now(), _using()
    expires = now + timeout
    session_pk = conversation_of(run_pk)
    if session_pk is None:
        return None
    with transaction.atomic(using=using):
        lock_conversation(session_pk, using)
        updated = AgentRun.objects.filter(pk=run_pk, status=RUNNING).update(
            status=WAITING,
            state=state,
            event_seq=seq,
            waited_at=Coalesce(F("waited_at"), now),
            approval_expires_at=expires,
            lease_expires_at=now,
            **grown(usage),
        )
        if not updated:
            return None
        write_spent(run_pk, spent)
        ToolApproval.objects.bulk_create(
            [
                ToolApproval(
                    run_id=run_pk,
                    call_id=serialization.column_text(call.call_id, 255),
                    name=serialization.column_text(call.name, 255),
                    arguments=call.arguments,
                    description=call.description,
                    requested_at=now,
                )
                for call in calls
            ]
        )
    return expires


@hop(write=True)
def decide(
    session_pk: int,
    call_id: str,
    *,
    approve: bool,
    message: str,
    user_id: Any,
    lease_seconds: float,
    hand_off: bool = False,
) -> Decided | None:
    """Record a decision on a pending call of the conversation's waiting run.

    None when there is no such pending call: unknown, already decided (here or by a
    concurrent tab), or its run is no longer waiting (ended) or past its expiry (which
    ends it through the caller's expiry). Nothing is written then. When this decision is
    the run's last, the run is claimed for resuming; ``hand_off``: by a task, which
    claims its next execution (``store.orders``), the paused state kept for it until then.
    """
    now, using = timezone.now(), _using()
    with transaction.atomic(using=using):
        lock_conversation(session_pk, using)
        run = (
            AgentRun.objects.select_for_update()
            .filter(session_id=session_pk, status=WAITING)
            .values("pk", "run_id", "agent_name", "state", "event_seq", "approval_expires_at")
            .first()
        )
        if run is None or (run["approval_expires_at"] or now) < now:
            return None
        claimed = ToolApproval.objects.filter(
            run_id=run["pk"], call_id=call_id, decision__isnull=True
        ).update(
            decision=ToolApproval.Decision.APPROVED if approve else ToolApproval.Decision.REJECTED,
            message="" if approve else message[:MAX_MESSAGE_CHARS],
            decided_by_id=user_id,
            decided_at=now,
        )
        if not claimed:
            return None
        # The decision is numbered in the run's sequence, so a tab that misses it sees
        # a gap (and recovers) instead of keeping stale buttons.
        run["event_seq"] += 1
        AgentRun.objects.filter(pk=run["pk"]).update(event_seq=run["event_seq"])
        decided = Decided(str(run["run_id"]), call_id, approve, run["event_seq"])
        if ToolApproval.objects.filter(run_id=run["pk"], decision__isnull=True).exists():
            return decided
        resume = _claim(session_pk, run, now, lease_seconds, hand_off=hand_off)
        if hand_off:
            resume = replace(resume, execution=_order_again(run["pk"]))
        return replace(decided, resume=resume)


def _claim(
    session_pk: int, run: dict[str, Any], now: datetime, lease_seconds: float, *, hand_off: bool
) -> Resume:
    """The last decision: the run is running again, on the caller's worker (or, handed
    off, queued for a task: its state stays stored until the task claims it)."""
    kept = {} if hand_off else {"state": ""}
    AgentRun.objects.filter(pk=run["pk"]).update(
        status=RUNNING,
        approval_expires_at=None,
        lease_expires_at=now + timedelta(seconds=lease_seconds),
        **kept,
    )
    return resume_of(session_pk, run)


def _order_again(run_pk: int) -> int:
    """One more execution of the run for a task to claim (``store.orders.claim``): its number."""
    orders = RunOrder.objects.filter(run_id=run_pk)
    if orders.update(ordered=F("ordered") + 1, cancel_requested=False):  # earlier Stops answered
        return int(orders.values_list("ordered", flat=True).get())
    # Started in a tab's worker before runs became tasks: its start was execution 1.
    RunOrder.objects.create(run_id=run_pk, origin=RunOrder.Origin.TAB, ordered=2, claimed=1)
    return 2


def resume_of(session_pk: int, run: dict[str, Any]) -> Resume:
    """What resuming ``run`` (pk, run_id, agent_name, state, event_seq) needs: its
    decisions and the history before it resumes."""
    decisions = {
        row.call_id: (row.decision == ToolApproval.Decision.APPROVED, row.message)
        for row in ToolApproval.objects.filter(run_id=run["pk"])
    }
    # What a socket joining the resumed run reads from the history: everything stored
    # before it resumed (the run's first part included).
    newest = SessionItem.objects.filter(session_id=session_pk).aggregate(newest=Max("id"))
    return Resume(
        run_pk=run["pk"],
        run_id=str(run["run_id"]),
        agent_name=run["agent_name"],
        state=run["state"],
        seq=run["event_seq"],
        history_item_id=newest["newest"] or 0,
        decisions=decisions,
    )


@hop(write=True)
def end_waiting(
    session_pk: int, *, reason: str, run_id: str | None = None, only_overdue: bool = False
) -> Ended | None:
    """End the conversation's waiting run as cancelled, its pending calls rejected (an
    approved call's output says it was not run).

    ``run_id``: only that run. ``only_overdue``: only if it is past its expiry. None when
    there was nothing to end (no such waiting run, or another worker ended or resumed it
    first).
    """
    now, using = timezone.now(), _using()
    runs = AgentRun.objects.filter(session_id=session_pk, status=WAITING)
    if run_id is not None:
        try:
            runs = runs.filter(run_id=uuid.UUID(run_id))
        except ValueError:
            return None  # not a run id: it names no run
    with transaction.atomic(using=using):
        lock_conversation(session_pk, using)
        run = runs.select_for_update().values("pk", "run_id", "event_seq", "approval_expires_at")
        found = run.first()
        if found is None or (only_overdue and (found["approval_expires_at"] or now) >= now):
            return None
        undecided = ToolApproval.objects.filter(run_id=found["pk"], decision__isnull=True)
        pending_ids = list(undecided.order_by("pk").values_list("call_id", flat=True))
        AgentRun.objects.filter(pk=found["pk"]).update(
            status=AgentRun.Status.CANCELLED,
            state="",
            finished_at=now,
            lease_expires_at=now,
            approval_expires_at=None,
            # Each rejection's approval.resolved, then the terminal event.
            event_seq=found["event_seq"] + len(pending_ids) + 1,
        )
        undecided.update(decision=ToolApproval.Decision.REJECTED, reason=reason, decided_at=now)
        # The pending calls have their rejection now; a call approved before the end
        # never ran, and its output says so (the model reads it next turn).
        close_open_calls(session_pk, found["pk"], using, text=NOT_RESUMED_CALL)
        mark_last_item(session_pk, found["pk"])
    return Ended(found["pk"], str(found["run_id"]), found["event_seq"], pending_ids)
