"""``store.chained_insert``: two new rows, the second pointing at the first, in one
PostgreSQL statement (SQLite keeps ``store.first_messages``' transaction)."""

from __future__ import annotations

import uuid

import pytest
from django.db import IntegrityError, connection
from django.forms.models import model_to_dict
from django.utils.timezone import now
from pytest_django import DjangoAssertNumQueries

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import chained_insert, runs
from tests.store.helpers import user

POSTGRESQL = connection.vendor == "postgresql"
pytestmark = pytest.mark.django_db(transaction=True)


def test_it_is_offered_on_postgresql_only() -> None:
    assert chained_insert.supported("default") is POSTGRESQL


@pytest.mark.skipif(not POSTGRESQL, reason="a data-modifying WITH is PostgreSQL's")
def test_the_rows_are_what_create_writes_in_one_statement(
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    owner = user("ann")
    conversation = AgentSession(session_id="chained", owner_id=owner.pk, title="T")
    run = runs.new_record(now(), "Assistant", 60, "tab-1")
    with django_assert_num_queries(1):
        conversation_pk, run_pk = chained_insert.insert_pair(
            conversation, run, "session", "default"
        )
    assert (conversation.pk, run.pk, run.session_id) == (conversation_pk, run_pk, conversation_pk)
    assert not conversation._state.adding
    assert not run._state.adding
    stored_run = AgentRun.objects.get(pk=run_pk)
    assert model_to_dict(stored_run) == model_to_dict(run)
    assert (stored_run.run_id, stored_run.started_at) == (run.run_id, run.started_at)
    stored = AgentSession.objects.get(pk=conversation_pk)
    assert (stored.session_id, stored.owner_id, stored.title) == ("chained", owner.pk, "T")
    assert (stored.created_at, stored.metadata) == (conversation.created_at, {})


@pytest.mark.skipif(not POSTGRESQL, reason="a data-modifying WITH is PostgreSQL's")
def test_a_second_row_that_breaks_a_constraint_leaves_no_first_row() -> None:
    taken = runs.new_record(now(), "A", 60, "")
    chained_insert.insert_pair(AgentSession(session_id="first"), taken, "session", "default")
    clash = runs.new_record(now(), "A", 60, "")
    clash.run_id = taken.run_id  # unique
    with pytest.raises(IntegrityError):
        chained_insert.insert_pair(AgentSession(session_id="second"), clash, "session", "default")
    assert list(AgentSession.objects.values_list("session_id", flat=True)) == ["first"]
    assert AgentRun.objects.count() == 1


@pytest.mark.skipif(not POSTGRESQL, reason="a data-modifying WITH is PostgreSQL's")
def test_a_first_row_that_breaks_a_constraint_leaves_no_second_row() -> None:
    AgentSession.objects.create(session_id="taken")
    run = runs.new_record(now(), "A", 60, "")
    run.run_id = uuid.uuid4()
    with pytest.raises(IntegrityError):
        chained_insert.insert_pair(AgentSession(session_id="taken"), run, "session", "default")
    assert AgentSession.objects.count() == 1
    assert not AgentRun.objects.exists()
