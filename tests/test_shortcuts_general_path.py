"""Where the shortcuts' conditions do not hold, the general path is taken: with query
logging, inside a caller's transaction, on PostgreSQL and under ``bridge.shipped_path()``.
Both paths store the same, and the shortcuts keep the guarantees under concurrency.
"""

from __future__ import annotations

import asyncio

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import bridge, transactions
from django_agent_sessions.store import items as storage
from tests.conftest import user_message
from tests.shortcuts_helpers import SQLITE, Statements, encoded, scope


@pytest.mark.django_db(transaction=True)
def test_with_query_logging_the_general_path_runs_and_is_logged(session_id):
    storage.append_items(scope(session_id), encoded("first"), "")
    with CaptureQueriesContext(connection) as queries:
        storage.append_items(scope(session_id), encoded("a"), "")
        storage.read_items(scope(session_id), 20)
        storage.pop_newest(scope(session_id))
    logged = [q["sql"] for q in queries.captured_queries]
    assert any(sql.startswith("UPDATE") for sql in logged)
    assert any(sql.startswith("INSERT") for sql in logged)
    assert any(sql.startswith("SELECT") for sql in logged)
    assert any(sql.startswith("DELETE") for sql in logged)
    assert all("?" not in sql for sql in logged)  # Django's own cursor and SQL


@pytest.mark.django_db(transaction=True)
def test_inside_a_callers_transaction_a_write_joins_it(session_id):
    storage.append_items(scope(session_id), encoded("kept"), "")

    class Undo(Exception):
        pass

    def undone_in_a_transaction() -> None:
        with transaction.atomic():
            storage.append_items(scope(session_id), encoded("undone"), "")
            assert storage.pop_newest(scope(session_id))["content"] == "undone"
            storage.append_items(scope(session_id), encoded("undone too"), "")
            raise Undo

    with pytest.raises(Undo):
        undone_in_a_transaction()
    assert [i["content"] for i in storage.read_items(scope(session_id), None)] == ["kept"]
    assert AgentSession.objects.get(session_id=session_id).item_count == 1


@pytest.mark.django_db(transaction=True)
def test_the_first_write_creates_the_conversation(session_id, make_user):
    owner = make_user("first")
    storage.append_items(scope(session_id, owner.pk), encoded("hello"), "Hello")
    row = AgentSession.objects.get(session_id=session_id)
    assert (row.owner_id, row.title, row.item_count) == (owner.pk, "Hello", 1)
    if SQLITE:
        assert not connection.connection.in_transaction


@pytest.mark.django_db(transaction=True)
def test_shipped_path_and_shortcut_store_the_same(session_id):
    with bridge.shipped_path():
        storage.append_items(scope(session_id), encoded("a", "b"), "")
    storage.append_items(scope(session_id), encoded("c"), "")
    with bridge.shipped_path():
        assert storage.pop_newest(scope(session_id))["content"] == "c"
        shipped = storage.read_items(scope(session_id), 5)
    assert storage.read_items(scope(session_id), 5) == shipped
    assert [i["content"] for i in shipped] == ["a", "b"]


@pytest.mark.skipif(SQLITE, reason="PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_postgresql_never_takes_the_sqlite_shortcut(session_id):
    connection.ensure_connection()
    assert transactions.driver(connection) is None
    seen = Statements()
    with connection.execute_wrapper(seen):
        storage.append_items(scope(session_id), encoded("a"), "")
    assert "BEGIN IMMEDIATE" not in seen.verbs()
    assert all("?" not in sql for sql in seen.sql)


async def test_shortcuts_keep_the_guarantees_under_concurrency_in_one_process(
    transactional_db, session_id
):
    # Several event loops' worth of writers on one conversation, all on the shortcut.
    from django_agent_sessions import DjangoSession

    session = DjangoSession(session_id)
    await session.add_items([user_message(f"m{i}") for i in range(40)])
    popped = await asyncio.gather(*(session.pop_item() for _ in range(45)))
    texts = [p["content"] for p in popped if p is not None]
    assert sorted(texts) == sorted(f"m{i}" for i in range(40))
    assert popped.count(None) == 5
