"""``store.orders``' claim: the statements it makes (on PostgreSQL one,
``store.claim_statement``; elsewhere a transaction), and a claim racing a Stop, each on
its own connection."""

from __future__ import annotations

import threading

import pytest
from django import db
from django.test.utils import CaptureQueriesContext

from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import orders, runs
from tests.store.test_orders import claim, order_of, placed

pytestmark = pytest.mark.django_db


def test_a_claim_is_one_transaction(session_id: str) -> None:
    started = placed(session_id)

    def statements() -> list[str]:
        with CaptureQueriesContext(db.connection) as captured:
            claim(started.run_id, 1)
        return [query["sql"].split()[0].upper() for query in captured.captured_queries]

    if db.connection.vendor == "postgresql":
        # One statement (store.claim_statement), whether it wins or finds it taken.
        assert statements() == ["WITH"]
        assert statements() == ["WITH"]
        return
    # The order's lookup, then one transaction (a savepoint inside the test's): the
    # conversation's lock, the conditional claim, the lease, then the order with its run
    # and conversation in one read.
    assert statements() == [
        "SELECT", "SAVEPOINT", "UPDATE", "UPDATE", "UPDATE", "SELECT", "RELEASE"
    ]  # fmt: skip
    # A delivery that finds the execution taken stops at its conditional UPDATE.
    assert statements() == ["SELECT", "SAVEPOINT", "UPDATE", "UPDATE", "RELEASE"]


def race(started: runs.StartedRun, conversation_pk: int) -> dict[str, object]:
    """A claim and a Stop of ``started`` released at the same moment, each on a thread
    (and connection) of its own: what each returned."""
    begin = threading.Barrier(2)
    outcome: dict[str, object] = {}

    def claiming() -> None:
        begin.wait()
        try:
            outcome["claimed"] = claim(started.run_id, 1)
        finally:
            db.connection.close()

    def stopping() -> None:
        begin.wait()
        try:
            outcome["unclaimed"] = orders.stop.sync(conversation_pk, started.run_id)
        finally:
            db.connection.close()

    threads = [threading.Thread(target=claiming), threading.Thread(target=stopping)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcome


@pytest.mark.django_db(transaction=True)
def test_a_claim_and_a_stop_at_the_same_moment_have_one_winner(session_id: str) -> None:
    """Either the task claims the start (and the Stop is noted for it to honour), or the
    Stop spends the claim (and no task runs it): never both, never neither."""
    for attempt in range(12):
        started = placed(f"{session_id}-{attempt}")
        conversation = AgentSession.objects.get(session_id=f"{session_id}-{attempt}")
        outcome = race(started, conversation.pk)
        order = order_of(started.pk)
        assert order.cancel_requested
        if outcome["claimed"] is not None:
            assert outcome["unclaimed"] is None
            assert order.claimed_by == "worker-1"
        else:
            assert outcome["unclaimed"] is not None
            assert order.claimed_by == "stop"
