"""Run orders (``RunOrder``): placing a run for a task, and claiming each execution once.

A queue delivers at least once: a task may arrive twice, be retried, or be delivered
again after its worker died. The order, not the queue, decides that an agent runs once:
execution N of a run (its start is 1, each resumption after decisions one more) is
claimed by one conditional ``UPDATE ... WHERE claimed = N - 1``, in the transaction that
renews the run's lease, under the conversation's lock (the lock order of ``store.runs``).
A claim that finds the execution taken, or the run ended, claims nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from django_agent_sessions.models import AgentRun, RunOrder
from django_agent_sessions.store import approvals, claim_statement, runs
from django_agent_sessions.store.hops import hop

# Where a run was asked for (``RunOrder.Origin``).
TAB, CODE, SCHEDULE = "tab", "code", "schedule"
_RUN_FIELDS = ("pk", "run_id", "agent_name", "state", "event_seq", "history_item_id")


@dataclass(frozen=True)
class Order:
    """What a run is asked to do, kept where a task worker reads it."""

    origin: str
    input: dict[str, Any]  # {"text", "parts", "files", "client_id"}
    agent: str = ""  # a dotted path; "" for AGENT_SESSIONS["AGENT"]
    context: Any = None  # JSON, or None for the default context
    detached: bool = False
    claimed: int = 0  # 1: executed where it was asked for (not by a task)

    def write(self, run_pk: int, using: str) -> None:
        self.row(run_pk).save(using=using, force_insert=True)

    def row(self, run_pk: int | None = None) -> RunOrder:
        """The order's row for run ``run_pk`` (None: set by ``store.chained_insert``),
        not saved."""
        row = RunOrder(
            origin=self.origin,
            input=self.input,
            agent=self.agent,
            context=self.context,
            detached=self.detached,
            claimed=self.claimed,
        )
        if run_pk is not None:
            row.run_id = run_pk
        return row


@dataclass(frozen=True)
class Claimed:
    """An execution a task claimed: everything it needs to run it."""

    execution: int
    run_pk: int
    run_id: str
    session_pk: int
    session_id: str
    owner: Any  # the conversation's owner (a user), or None
    history_item_id: int
    seq: int  # of the run's last event so far
    order: Order
    resume: approvals.Resume | None  # set for a resumption (execution > 1)


@hop(write=True)
def claim(run_id: str, execution: int, *, worker: str, lease_seconds: float) -> Claimed | None:
    """Claim execution ``execution`` of run ``run_id`` for ``worker`` (see the module);
    None if it is taken, not ordered, or the run has ended (nothing is run then).

    A start on PostgreSQL is claimed in one statement (``store.claim_statement``);
    anything else takes the same steps in one transaction."""
    now, using = timezone.now(), runs.database()
    lease_until = now + timedelta(seconds=lease_seconds)
    if execution == 1 and claim_statement.supported(using):
        started = claim_statement.claim_start(
            run_id, worker=worker[:255], now=now, lease_until=lease_until, using=using
        )
        return _claimed_start(started) if started is not None else None
    found = (
        RunOrder.objects.filter(run__run_id=run_id).values_list("run_id", "run__session_id").first()
    )
    if found is None:  # deleted with its conversation, or never placed
        return None
    run_pk, session_pk = found
    with transaction.atomic(using=using):
        runs.lock_conversation(session_pk, using)
        orders = RunOrder.objects.filter(run_id=run_pk, claimed=execution - 1)
        if not orders.filter(ordered__gte=execution).update(
            claimed=execution, claimed_by=worker[:255], claimed_at=now
        ):
            return None
        live = AgentRun.objects.filter(pk=run_pk).running()
        if not live.update(lease_expires_at=lease_until):
            return None  # ended while queued (a Stop, the sweep): the claim is spent
        # One read: the order, its run and the conversation with its owner.
        order = RunOrder.objects.select_related("run__session__owner").get(run_id=run_pk)
        run = {field: getattr(order.run, field) for field in _RUN_FIELDS}
        resume = None
        if execution > 1:
            resume = approvals.resume_of(session_pk, run)
            AgentRun.objects.filter(pk=run_pk).update(state="")
        return _claimed(execution, order, session_pk, resume)


@hop(write=True)
def claim_waiting(limit: int, *, worker: str, lease_seconds: float) -> list[Claimed]:
    """Claim for ``worker`` up to ``limit`` starts whose orders no task has claimed yet,
    oldest first: the runs whose tasks still wait in the queue. Their tasks, delivered
    later, find them taken and do nothing. A run that another claim, a Stop or an end
    holds at that moment is left to its own task."""
    if limit <= 0:
        return []
    now, using = timezone.now(), runs.database()
    lease_until = now + timedelta(seconds=lease_seconds)
    if claim_statement.supported(using):
        started = claim_statement.claim_waiting_starts(
            limit, worker=worker[:255], now=now, lease_until=lease_until, using=using
        )
        return [_claimed_start(start) for start in started]
    waiting = RunOrder.objects.filter(
        claimed=0, ordered__gte=1, run__status=AgentRun.Status.RUNNING
    )
    run_ids = list(waiting.order_by("ordered_at").values_list("run__run_id", flat=True)[:limit])
    claimed = (
        claim.sync(str(run_id), 1, worker=worker, lease_seconds=lease_seconds) for run_id in run_ids
    )
    return [start for start in claimed if start is not None]


@hop
def claimed_already(run_id: str, execution: int) -> bool:
    """Whether execution ``execution`` of run ``run_id`` has been claimed (or spent by
    a Stop): a task delivered for it has nothing to do."""
    return bool(RunOrder.objects.filter(run__run_id=run_id, claimed__gte=execution).exists())


def _claimed(
    execution: int, order: RunOrder, session_pk: int, resume: approvals.Resume | None
) -> Claimed:
    run, conversation = order.run, order.run.session
    return Claimed(
        execution=execution,
        run_pk=run.pk,
        run_id=str(run.run_id),
        session_pk=session_pk,
        session_id=conversation.session_id,
        owner=conversation.owner,
        history_item_id=run.history_item_id,
        seq=run.event_seq,
        order=Order(order.origin, order.input, order.agent, order.context, order.detached),
        resume=resume,
    )


def _claimed_start(started: claim_statement.ClaimedStart) -> Claimed:
    """A start claimed in one statement, as ``claim`` returns it (same field names)."""
    fields = {**started._asdict(), "order": Order(*started.order)}
    return Claimed(execution=1, resume=None, **fields)


@dataclass(frozen=True)
class Unclaimed:
    """A run whose order no task has claimed yet, ended by a Stop before it started."""

    run_pk: int
    run_id: str
    seq: int
    resumption: bool = False  # a resumption after decisions, not the run's start


@hop(write=True)
def stop(session_pk: int, run_id: str | None, *, claimed_runs_on: bool = False) -> Unclaimed | None:
    """A Stop for the conversation's ordered run (only ``run_id``, when given): noted on
    its order, so that an execution claimed before the Stop reached it stops once it
    listens; if no task has claimed its next execution yet, the Stop claims it (returned:
    the caller records the run's end and tells), so that no task will.

    ``claimed_runs_on``: a claimed execution is left running, not noted (its task could
    not be enqueued, but a worker claimed it ahead of its task: ``claim_waiting``)."""
    using = runs.database()
    with transaction.atomic(using=using):
        runs.lock_conversation(session_pk, using)
        running = AgentRun.objects.filter(session_id=session_pk).running()
        if run_id is not None:
            running = running.filter(run_id=run_id)
        orders = RunOrder.objects.filter(run__in=running.values("pk"))
        order = orders.values_list("run_id", "run__run_id", "ordered", "claimed").first()
        if order is None:
            return None
        run_pk, public_id, ordered, claimed = order
        if claimed >= ordered:  # its task listens for the Stop, or looks here once it does
            if not claimed_runs_on:
                RunOrder.objects.filter(run_id=run_pk).update(cancel_requested=True)
            return None
        # Spent by the Stop: a task delivered later claims nothing.
        RunOrder.objects.filter(run_id=run_pk).update(
            cancel_requested=True, claimed=ordered, claimed_by="stop"
        )
        seq = AgentRun.objects.filter(pk=run_pk).values_list("event_seq", flat=True).get()
    return Unclaimed(run_pk, str(public_id), seq, resumption=ordered > 1)


@hop
def stop_requested(run_pk: int) -> bool:
    """Whether a Stop was noted on the run's order (``stop``)."""
    return bool(RunOrder.objects.filter(run_id=run_pk, cancel_requested=True).exists())


@hop
def outcome(run_id: str) -> tuple[str, str] | None:
    """The run's status and error code once it ended; None while it holds its
    conversation (running or waiting), or if it does not exist."""
    found = AgentRun.objects.filter(run_id=run_id).values_list("status", "error_code").first()
    if found is None or found[0] in (AgentRun.Status.RUNNING, AgentRun.Status.WAITING):
        return None
    return str(found[0]), str(found[1])
