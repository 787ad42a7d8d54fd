"""``store.first_messages``: a new conversation and its first run, in one transaction."""

from __future__ import annotations

import pytest
from django.db import connection
from pytest_django import DjangoAssertNumQueries

from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentRun, AgentSession, RunOrder
from django_agent_sessions.store import first_messages, orders, runs
from tests.conftest import user_message
from tests.store.helpers import item_ids, user, write

pytestmark = pytest.mark.django_db

open_and_start = first_messages.open_and_start.sync


def test_a_new_id_gets_its_conversation_and_run_in_two_inserts(
    session_id: str, django_assert_max_num_queries: DjangoAssertNumQueries
) -> None:
    owner = user("ann")
    with django_assert_max_num_queries(4):  # a savepoint and its release, two INSERTs
        opened, started = open_and_start(
            session_id, owner_id=owner.pk, agent_name="A", lease_seconds=60, client_id="tab-1"
        )
    assert started is not None
    assert opened.created
    conversation = AgentSession.objects.get(session_id=session_id)
    assert (opened.pk, conversation.owner_id) == (conversation.pk, owner.pk)
    run = AgentRun.objects.get(pk=started.pk)
    assert (run.session_id, run.status, run.agent_name) == (conversation.pk, "running", "A")
    assert (run.client_id, run.history_item_id, str(run.run_id)) == ("tab-1", 0, started.run_id)


def test_an_anonymous_visitor_gets_a_conversation_without_owner(session_id: str) -> None:
    opened, started = open_and_start(session_id, owner_id=None, agent_name="A", lease_seconds=60)
    assert started is not None
    assert AgentSession.objects.get(pk=opened.pk).owner_id is None


def test_an_existing_conversation_gets_the_usual_start(session_id: str) -> None:
    owner = user("ann")
    write(session_id, user_message("hi"), owner_id=owner.pk)
    opened, started = open_and_start(
        session_id, owner_id=owner.pk, agent_name="A", lease_seconds=60
    )
    assert started is not None
    assert not opened.created
    # The usual start: the run's history is what the conversation held before it.
    assert started.history_item_id == item_ids(session_id)[-1]


def test_an_existing_conversation_with_a_run_gets_none(session_id: str) -> None:
    owner = user("ann")
    conversation = write(session_id, user_message("hi"), owner_id=owner.pk)
    assert runs.start.sync(conversation.pk, agent_name="A", lease_seconds=60) is not None
    opened, started = open_and_start(
        session_id, owner_id=owner.pk, agent_name="B", lease_seconds=60
    )
    assert (opened.pk, started) == (conversation.pk, None)
    assert AgentRun.objects.filter(session=conversation).count() == 1


def test_someone_elses_conversation_is_refused_with_nothing_written(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"), owner_id=user("ann").pk)
    with pytest.raises(SessionOwnershipError):
        open_and_start(session_id, owner_id=user("bob").pk, agent_name="A", lease_seconds=60)
    assert not AgentRun.objects.filter(session=conversation).exists()
    assert AgentSession.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_it_is_one_statement_on_postgresql(
    session_id: str,
    django_assert_num_queries: DjangoAssertNumQueries,
    django_assert_max_num_queries: DjangoAssertNumQueries,
) -> None:
    """In production (autocommit): one round trip on PostgreSQL (``chained_insert``)
    where a transaction of two INSERTs took four; the rows are the same."""
    owner = user("ann")
    if connection.vendor == "postgresql":
        counted = django_assert_num_queries(1)
    else:  # SQLite: the transaction (BEGIN and two INSERTs in the log)
        counted = django_assert_max_num_queries(4)
    with counted:
        opened, started = open_and_start(
            session_id, owner_id=owner.pk, agent_name="A", lease_seconds=60, client_id="tab-1"
        )
    assert started is not None
    conversation = AgentSession.objects.get(session_id=session_id)
    assert (opened.pk, opened.created, conversation.owner_id) == (conversation.pk, True, owner.pk)
    run = AgentRun.objects.get(pk=started.pk)
    assert (run.session_id, run.status, run.agent_name) == (conversation.pk, "running", "A")
    assert (run.client_id, run.history_item_id, str(run.run_id)) == ("tab-1", 0, started.run_id)
    assert run.lease_expires_at > run.started_at
    assert conversation.metadata == {}


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_taken_id_gets_the_usual_start(session_id: str) -> None:
    """Another tab created the id after the visitor looked: the one statement fails
    whole (no run of no conversation), and the existing conversation's start follows."""
    owner = user("ann")
    conversation = write(session_id, user_message("hi"), owner_id=owner.pk)
    runs_before = AgentRun.objects.count()
    opened, started = open_and_start(
        session_id, owner_id=owner.pk, agent_name="A", lease_seconds=60
    )
    assert started is not None
    assert (opened.pk, opened.created) == (conversation.pk, False)
    assert AgentRun.objects.count() == runs_before + 1
    assert AgentRun.objects.get(pk=started.pk).session_id == conversation.pk


@pytest.mark.django_db(transaction=True)
def test_with_an_order_it_is_one_statement_on_postgresql(
    session_id: str,
    django_assert_num_queries: DjangoAssertNumQueries,
    django_assert_max_num_queries: DjangoAssertNumQueries,
) -> None:
    """A run for a task: the conversation, the run and its order in one round trip on
    PostgreSQL (a transaction of three INSERTs elsewhere); the order as placed."""
    order = orders.Order(orders.TAB, {"text": "Hi"}, agent="a.b", context={"n": 1}, detached=True)
    if connection.vendor == "postgresql":
        counted = django_assert_num_queries(1)
    else:
        counted = django_assert_max_num_queries(5)
    with counted:
        _opened, started = open_and_start(
            session_id, owner_id=None, agent_name="A", lease_seconds=60, order=order
        )
    assert started is not None
    stored = RunOrder.objects.get(run_id=started.pk)
    assert stored.run.session.session_id == session_id
    placed = (stored.origin, stored.input, stored.agent, stored.context, stored.detached)
    assert placed == ("tab", {"text": "Hi"}, "a.b", {"n": 1}, True)
    assert (stored.ordered, stored.claimed, stored.ordered_at is not None) == (1, 0, True)
