"""``store.claim_statements``: the SQL of the claims, PostgreSQL's. The starts waiting in
the queue are claimed without waiting for any lock: a conversation another transaction
holds (a Stop, a claim, an end) is skipped and left to its run's own task, so two workers
claiming at once cannot deadlock. The claims' rows are tested through
``store.claim_statement`` and ``store.orders``."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django import db
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, RunOrder
from django_agent_sessions.store import claim_statement, claim_statements, runs
from tests.store.test_orders import placed

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        db.connection.vendor != "postgresql", reason="a data-modifying WITH is PostgreSQL's"
    ),
]

WAIT = 15.0  # the most any awaited event may take


def test_the_statements_name_the_models_tables_and_the_owner_s_columns() -> None:
    quote = db.connection.ops.quote_name
    users = get_user_model()
    for build in (claim_statements.claim_start, claim_statements.claim_waiting_starts):
        sql = build(db.connection, ["id", "username"])
        for model in (AgentRun, RunOrder, AgentSession, users):
            assert quote(model._meta.db_table) in sql
        assert f"u.{quote('id')}, u.{quote('username')}" in sql


def claim_waiting(limit: int) -> list[claim_statement.ClaimedStart]:
    now = timezone.now()
    return claim_statement.claim_waiting_starts(
        limit, worker="w", now=now, lease_until=now + timedelta(seconds=60), using="default"
    )


def test_a_conversation_held_by_another_transaction_is_skipped_without_waiting(
    session_id: str,
) -> None:
    held, free = placed(f"{session_id}-held"), placed(f"{session_id}-free")
    held_pk = AgentSession.objects.get(session_id=f"{session_id}-held").pk
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                runs.lock_conversation(held_pk, "default")
                locked.set()
                release.wait(WAIT)
        finally:
            db.connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(WAIT)
        outcome: list[list[claim_statement.ClaimedStart]] = []

        def claiming() -> None:
            try:
                outcome.append(claim_waiting(10))
            finally:
                db.connection.close()

        claimer = threading.Thread(target=claiming)
        claimer.start()
        claimer.join(WAIT)  # it waits for nothing: it ends while the lock is held
        assert not claimer.is_alive()
        assert not release.is_set()
        assert [start.run_id for start in outcome[0]] == [free.run_id]
    finally:
        release.set()
        holder.join(WAIT)
    assert RunOrder.objects.get(run_id=held.pk).claimed == 0
    assert [start.run_id for start in claim_waiting(10)] == [held.run_id]
