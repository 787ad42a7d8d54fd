"""``store.orders``: a run placed for a task, each of its executions claimed once (also
by many claimants at once), a Stop before or after the claim, and the hand-off of a
resumption after decisions (``store.approvals.decide(..., hand_off=True)``).

The tasks that claim are in ``tests/streaming/working``; these call the store directly.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django import db
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, RunOrder
from django_agent_sessions.store import approvals, orders, runs
from tests.conftest import user_message
from tests.store.helpers import call, start, write

pytestmark = pytest.mark.django_db

MESSAGE = {"text": "Pay Ann and Bob", "parts": [], "files": [], "client_id": "tab-1"}
ORDER = orders.Order(orders.TAB, MESSAGE, agent="tests.order_agent.make_counting_agent")
CALLS = [
    approvals.RequestedCall("c1", "pay", '{"to": "Ann"}'),
    approvals.RequestedCall("c2", "pay", '{"to": "Bob"}'),
]
USAGE = {"requests": 1, "input_tokens": 10, "output_tokens": 2, "total_tokens": 12}


def placed(session_id: str, order: orders.Order | None = ORDER) -> runs.StartedRun:
    """A run of a new conversation recorded with ``order`` (None: started inline)."""
    conversation = write(session_id, user_message("Pay Ann and Bob"))
    return start(conversation, lease_seconds=300.0, order=order)


def claim(run_id: str, execution: int, worker: str = "worker-1") -> orders.Claimed | None:
    return orders.claim.sync(run_id, execution, worker=worker, lease_seconds=60.0)


def order_of(run_pk: int) -> RunOrder:
    return RunOrder.objects.get(run_id=run_pk)


def paused(session_id: str, order: orders.Order | None = ORDER) -> AgentRun:
    """A placed run whose first execution was claimed and paused on CALLS."""
    started = placed(session_id, order)
    if order is not None:
        assert claim(started.run_id, 1) is not None
    write(session_id, call("c1", "pay"), call("c2", "pay"))
    expires = approvals.pause.sync(
        started.pk, state="STATE", seq=3, calls=CALLS, usage=USAGE, timeout=timedelta(minutes=5)
    )
    assert expires is not None
    return AgentRun.objects.get(pk=started.pk)


def decide(run: AgentRun, call_id: str, approve: bool) -> approvals.Decided | None:
    return approvals.decide.sync(
        run.session_id,
        call_id,
        approve=approve,
        message="" if approve else "Not Bob.",
        user_id=None,
        lease_seconds=300.0,
        hand_off=True,
    )


def test_an_execution_is_claimed_once_with_what_it_needs(session_id: str) -> None:
    started = placed(session_id)
    before = timezone.now()
    claimed = claim(started.run_id, 1)
    assert claimed is not None
    conversation = AgentSession.objects.get(session_id=session_id)
    assert claimed == orders.Claimed(
        execution=1,
        run_pk=started.pk,
        run_id=started.run_id,
        session_pk=conversation.pk,
        session_id=session_id,
        owner=None,
        history_item_id=started.history_item_id,
        seq=0,
        order=ORDER,
        resume=None,
    )
    order = order_of(started.pk)
    assert (order.ordered, order.claimed, order.claimed_by) == (1, 1, "worker-1")
    assert order.claimed_at is not None
    assert order.claimed_at >= before
    # The claim renews the run's lease: the queue's lease becomes a running run's.
    run = AgentRun.objects.get(pk=started.pk)
    assert run.lease_expires_at is not None
    assert run.lease_expires_at - order.claimed_at == timedelta(seconds=60)
    # A second delivery of the same task finds it taken, and changes nothing.
    assert claim(started.run_id, 1, worker="worker-2") is None
    again = order_of(started.pk)
    assert (again.claimed, again.claimed_by, again.claimed_at) == (1, "worker-1", order.claimed_at)


def test_a_claim_names_the_owner_and_the_order_as_placed(session_id: str) -> None:
    from tests.store.helpers import user

    owner = user("alice")
    conversation = write(session_id, user_message("hi"), owner_id=owner.pk)
    order = orders.Order(orders.CODE, MESSAGE, context={"tenant": 7}, detached=True)
    started = start(conversation, order=order)
    claimed = claim(started.run_id, 1, worker="w" * 300)
    assert claimed is not None
    assert (claimed.owner, claimed.order) == (owner, order)
    assert order_of(started.pk).claimed_by == "w" * 255  # trimmed to its column


@pytest.mark.django_db(transaction=True)
def test_many_claimants_of_one_execution_have_one_winner(session_id: str) -> None:
    started = placed(session_id)
    claimants = 8
    begin = threading.Barrier(claimants)
    won: list[tuple[str, bool]] = []

    def claiming(worker: str) -> None:
        begin.wait()
        try:  # each thread its own connection
            won.append((worker, claim(started.run_id, 1, worker=worker) is not None))
        finally:
            db.connection.close()

    threads = [threading.Thread(target=claiming, args=(f"w{n}",)) for n in range(claimants)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    winners = [worker for worker, claimed in won if claimed]
    assert len(won) == claimants
    assert len(winners) == 1
    assert order_of(started.pk).claimed_by == winners[0]


def test_an_execution_not_ordered_is_not_claimed(session_id: str) -> None:
    started = placed(session_id)
    assert claim(started.run_id, 2) is None  # a resumption nobody handed off
    assert order_of(started.pk).claimed == 0
    assert claim(started.run_id, 1) is not None  # its start still can be


def test_a_run_without_an_order_is_not_claimed(session_id: str) -> None:
    started = placed(session_id, order=None)  # executed where it was asked for
    assert claim(started.run_id, 1) is None
    assert not RunOrder.objects.exists()


def test_an_order_placed_where_it_runs_is_claimed_already(session_id: str) -> None:
    started = placed(session_id, order=orders.Order(orders.CODE, MESSAGE, claimed=1))
    assert claim(started.run_id, 1) is None


def test_a_run_that_ended_while_queued_is_not_claimed(session_id: str) -> None:
    started = placed(session_id)
    ended_at = timezone.now() - timedelta(seconds=5)
    AgentRun.objects.filter(pk=started.pk).update(
        status="failed",
        error_code=runs.WORKER_LOST,
        finished_at=ended_at,
        lease_expires_at=ended_at,
    )
    before = AgentRun.objects.values().get(pk=started.pk)
    assert claim(started.run_id, 1) is None
    # The run stays as it ended: no lease renewed, nothing restarted.
    assert AgentRun.objects.values().get(pk=started.pk) == before
    # Its execution is spent: no later delivery claims it either.
    assert claim(started.run_id, 1) is None


def test_a_run_deleted_with_its_conversation_is_not_claimed(session_id: str) -> None:
    started = placed(session_id)
    AgentSession.objects.filter(session_id=session_id).delete()
    assert claim(started.run_id, 1) is None


def test_a_stop_before_any_claim_spends_it(session_id: str) -> None:
    started = placed(session_id)
    AgentRun.objects.filter(pk=started.pk).update(event_seq=4)
    session_pk = AgentSession.objects.get(session_id=session_id).pk
    unclaimed = orders.stop.sync(session_pk, started.run_id)
    assert unclaimed == orders.Unclaimed(started.pk, started.run_id, seq=4)
    order = order_of(started.pk)
    assert (order.ordered, order.claimed, order.claimed_by) == (1, 1, "stop")
    assert order.cancel_requested
    assert orders.stop_requested.sync(started.pk)
    # The task, delivered later, finds nothing to do.
    assert claim(started.run_id, 1) is None
    # The Stop ends nothing itself: the caller records the run's end.
    assert AgentRun.objects.get(pk=started.pk).status == "running"


def test_a_stop_after_the_claim_asks_the_run_to_stop(session_id: str) -> None:
    started = placed(session_id)
    assert claim(started.run_id, 1) is not None
    assert not orders.stop_requested.sync(started.pk)
    session_pk = AgentSession.objects.get(session_id=session_id).pk
    assert orders.stop.sync(session_pk, None) is None
    order = order_of(started.pk)
    assert (order.claimed, order.claimed_by, order.cancel_requested) == (1, "worker-1", True)
    assert orders.stop_requested.sync(started.pk)


def test_a_stop_of_another_run_or_of_an_inline_run_does_nothing(session_id: str) -> None:
    started = placed(session_id)
    session_pk = AgentSession.objects.get(session_id=session_id).pk
    other = "00000000-0000-0000-0000-000000000000"
    assert orders.stop.sync(session_pk, other) is None
    assert order_of(started.pk).cancel_requested is False
    inline = placed("inline-run", order=None)
    inline_pk = AgentSession.objects.get(session_id="inline-run").pk
    assert orders.stop.sync(inline_pk, inline.run_id) is None


def test_a_handed_off_resumption_is_ordered_and_claimed_once(session_id: str) -> None:
    run = paused(session_id)
    first = decide(run, "c1", True)
    assert first is not None
    assert first.resume is None  # a call still pending: nothing to resume yet
    last = decide(run, "c2", False)
    assert last is not None
    assert last.resume is not None
    assert (last.resume.execution, last.resume.state) == (2, "STATE")
    order = order_of(run.pk)
    assert (order.ordered, order.claimed) == (2, 1)
    # Running again, queued for a task: its paused state is kept until one claims it.
    record = AgentRun.objects.get(pk=run.pk)
    assert (record.status, record.state) == ("running", "STATE")
    assert claim(str(run.run_id), 1) is None  # the start, delivered again
    claimed = claim(str(run.run_id), 2, worker="worker-2")
    assert claimed is not None
    assert claimed.execution == 2
    assert claimed.resume is not None
    assert claimed.resume.state == "STATE"
    assert claimed.resume.decisions == {"c1": (True, ""), "c2": (False, "Not Bob.")}
    assert claimed.seq == last.seq == claimed.resume.seq
    # The state leaves the record with the claim; the resumption is claimed once.
    assert AgentRun.objects.get(pk=run.pk).state == ""
    assert claim(str(run.run_id), 2, worker="worker-3") is None
    assert order_of(run.pk).claimed_by == "worker-2"


def test_a_hand_off_answers_the_stops_before_it(session_id: str) -> None:
    run = paused(session_id)
    RunOrder.objects.filter(run_id=run.pk).update(cancel_requested=True)
    assert decide(run, "c1", True) is not None
    assert decide(run, "c2", True) is not None
    assert not orders.stop_requested.sync(run.pk)


def test_a_run_started_inline_is_handed_off_as_its_second_execution(session_id: str) -> None:
    run = paused(session_id, order=None)
    assert decide(run, "c1", True) is not None
    last = decide(run, "c2", True)
    assert last is not None
    assert last.resume is not None
    assert last.resume.execution == 2
    order = order_of(run.pk)
    assert (order.origin, order.ordered, order.claimed) == ("tab", 2, 1)
    claimed = claim(str(run.run_id), 2)
    assert claimed is not None
    assert claimed.resume is not None
    assert claimed.resume.decisions == {"c1": (True, ""), "c2": (True, "")}


def test_a_stop_before_a_handed_off_resumption_is_claimed_spends_it(session_id: str) -> None:
    run = paused(session_id)
    decide(run, "c1", True)
    last = decide(run, "c2", True)
    assert last is not None
    unclaimed = orders.stop.sync(run.session_id, None)
    assert unclaimed == orders.Unclaimed(run.pk, str(run.run_id), seq=last.seq, resumption=True)
    order = order_of(run.pk)
    assert (order.ordered, order.claimed, order.claimed_by) == (2, 2, "stop")
    assert claim(str(run.run_id), 2) is None
