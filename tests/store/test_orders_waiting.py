"""``store.orders.claim_waiting``: a worker claims the starts whose tasks still wait in
the queue, oldest first, up to its limit, each once, as ``claim`` claims them; their tasks
find them taken. Also ``claimed_already`` and a Stop of an enqueue that failed
(``stop(..., claimed_runs_on=True)``). On PostgreSQL one statement
(``store.claim_statements``), elsewhere one ``claim`` after another."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django import db
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, RunOrder
from django_agent_sessions.store import orders, runs
from tests.store.test_orders import ORDER, claim, order_of, paused, placed

pytestmark = pytest.mark.django_db


def claim_waiting(limit: int, worker: str = "worker-2") -> list[orders.Claimed]:
    return orders.claim_waiting.sync(limit, worker=worker, lease_seconds=60.0)


def placed_in_order(session_id: str, count: int) -> list[runs.StartedRun]:
    """``count`` runs of new conversations, ordered a second apart, oldest first."""
    started = [placed(f"{session_id}-{number}") for number in range(count)]
    now = timezone.now()
    for age, run in enumerate(reversed(started)):
        RunOrder.objects.filter(run_id=run.pk).update(ordered_at=now - timedelta(seconds=age))
    return started


def test_the_oldest_waiting_starts_are_claimed_up_to_the_limit(session_id: str) -> None:
    first, second, third = placed_in_order(session_id, 3)
    before = timezone.now()
    claimed = claim_waiting(2)
    assert [start.run_id for start in claimed] == [first.run_id, second.run_id]
    for start in (first, second):
        order = order_of(start.pk)
        assert (order.claimed, order.claimed_by) == (1, "worker-2")
        assert order.claimed_at is not None
        assert order.claimed_at >= before
        lease = AgentRun.objects.get(pk=start.pk).lease_expires_at
        assert lease >= before + timedelta(seconds=59)
    assert order_of(third.pk).claimed == 0
    # Their tasks, delivered later, find them taken; the third's claims it.
    assert claim(first.run_id, 1) is None
    assert claim(second.run_id, 1) is None
    assert orders.claimed_already.sync(first.run_id, 1)
    assert not orders.claimed_already.sync(third.run_id, 1)
    assert claim(third.run_id, 1) is not None
    assert claim_waiting(5) == []


def test_a_start_claimed_ahead_carries_what_its_own_claim_would(session_id: str) -> None:
    """The same ``Claimed`` as the task's own claim (compared on a twin conversation)."""
    ahead, own = placed(f"{session_id}-a"), placed(f"{session_id}-b")
    RunOrder.objects.filter(run_id=own.pk).update(claimed=1)  # not waiting
    (claimed,) = claim_waiting(4)
    RunOrder.objects.filter(run_id=own.pk).update(claimed=0)
    twin = claim(own.run_id, 1)
    assert twin is not None
    assert (claimed.run_pk, claimed.run_id) == (ahead.pk, ahead.run_id)
    assert (claimed.execution, claimed.resume, claimed.owner) == (1, None, twin.owner)
    assert (claimed.seq, claimed.order) == (twin.seq, twin.order)
    assert claimed.history_item_id == ahead.history_item_id
    assert claimed.order == orders.Order(ORDER.origin, ORDER.input, ORDER.agent)
    assert claimed.session_id == f"{session_id}-a"
    assert claimed.session_pk == AgentSession.objects.get(session_id=claimed.session_id).pk


def test_only_starts_of_running_runs_that_no_task_claimed_are_taken(session_id: str) -> None:
    inline = placed(f"{session_id}-inline", order=None)
    in_place = placed(f"{session_id}-code", order=orders.Order(orders.CODE, {}, claimed=1))
    ended = placed(f"{session_id}-ended")
    AgentRun.objects.filter(pk=ended.pk).update(status="cancelled")
    claimed_once = placed(f"{session_id}-claimed")
    assert claim(claimed_once.run_id, 1) is not None
    resumption = paused(f"{session_id}-paused")  # its resumption is not a start
    RunOrder.objects.filter(run_id=resumption.pk).update(ordered=2)
    assert claim_waiting(10) == []
    untouched = {inline.pk, in_place.pk, ended.pk, claimed_once.pk, resumption.pk}
    assert not RunOrder.objects.filter(run_id__in=untouched, claimed_by="worker-2").exists()


def test_a_limit_of_nothing_asks_nothing(session_id: str) -> None:
    placed(session_id)
    with CaptureQueriesContext(db.connection) as captured:
        assert claim_waiting(0) == []
    assert captured.captured_queries == []


def test_on_postgresql_the_claims_are_one_statement(session_id: str) -> None:
    placed_in_order(session_id, 3)
    with CaptureQueriesContext(db.connection) as captured:
        assert len(claim_waiting(3)) == 3
    verbs = [query["sql"].split()[0].upper() for query in captured.captured_queries]
    if db.connection.vendor == "postgresql":
        assert verbs == ["WITH"]
    else:  # the waiting run ids, then each claim's transaction
        assert verbs[0] == "SELECT"
        assert verbs.count("SAVEPOINT") == 3


def test_a_failed_enqueue_leaves_a_run_claimed_ahead_running(session_id: str) -> None:
    started = placed(session_id)
    assert len(claim_waiting(1)) == 1
    session_pk = AgentSession.objects.get(session_id=session_id).pk
    assert orders.stop.sync(session_pk, started.run_id, claimed_runs_on=True) is None
    assert not order_of(started.pk).cancel_requested
    # Unclaimed, the same Stop spends the claim as any Stop does.
    other = placed(f"{session_id}-2")
    other_pk = AgentSession.objects.get(session_id=f"{session_id}-2").pk
    unclaimed = orders.stop.sync(other_pk, other.run_id, claimed_runs_on=True)
    assert unclaimed is not None
    assert unclaimed.run_id == other.run_id
    assert claim(other.run_id, 1) is None
