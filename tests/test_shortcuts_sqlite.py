"""The SQLite transaction and cursor DjangoSession's store takes, and the Django and sqlite3
internals they rely on.

The ``*_assumption`` tests fail loudly when a Django or CPython release changes those
internals; the others check that execute wrappers and patched cursor wrappers still see
every statement, and that the cursor kept between operations is closed after a failure
and never holds a statement in progress.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from django.db import connection
from django.db.backends.utils import CursorWrapper

from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import compaction, search, transactions
from django_agent_sessions.store import items as storage
from tests.shortcuts_helpers import Statements, encoded, only_sqlite, scope


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_django_sqlite_connection_assumption():
    # Django keeps a SQLite connection in autocommit with the driver's legacy
    # transaction control and isolation_level None, and starts transactions itself.
    assert transactions.sqlite_shortcut_supported(), "Django's SQLite connection internals changed"
    connection.ensure_connection()
    raw = connection.connection
    assert isinstance(raw, sqlite3.Connection)
    assert connection.get_autocommit()
    assert raw.isolation_level is None
    assert not raw.in_transaction
    assert getattr(raw, "autocommit", transactions._LEGACY) == transactions._LEGACY
    # _prepare_cursor wraps any DB-API cursor as Django wraps its own.
    wrapped = connection._prepare_cursor(raw.cursor())
    assert isinstance(wrapped, CursorWrapper)
    assert type(wrapped.cursor) is sqlite3.Cursor
    # BEGIN IMMEDIATE on it opens a transaction that the driver's commit() ends.
    wrapped.execute("BEGIN IMMEDIATE")
    assert raw.in_transaction
    raw.commit()
    assert not raw.in_transaction
    wrapped.close()
    # The general path's SQL (with %s) is what Django's own cursor rewrites.
    with connection.cursor() as cursor:
        assert cursor.cursor.convert_query("SELECT %s") == "SELECT ?"


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_every_statement_of_a_shortcut_reaches_execute_wrappers(session_id):
    storage.append_items(scope(session_id), encoded("first"), "")  # creates it
    # The search index's mark at the newest item, and this connection's hint of it read
    # by one write: the writes below are then no batch (earlier tests leave either
    # anywhere; a due batch is tests/store/test_search_batches.py's).
    search.install(connection)
    storage.append_items(scope(session_id), encoded("second"), "")
    seen = Statements()
    with connection.execute_wrapper(seen):
        storage.append_items(scope(session_id), encoded("a", "b"), "")
        assert [i["content"] for i in storage.read_items(scope(session_id), None)] == [
            "first",
            "second",
            "a",
            "b",
        ]
        assert storage.pop_newest(scope(session_id))["content"] == "b"
        storage.clear(scope(session_id))
    assert seen.verbs() == [
        "BEGIN IMMEDIATE",
        "UPDATE",
        "INSERT",
        "SELECT",
        "BEGIN IMMEDIATE",
        "UPDATE",
        "DELETE",
        "BEGIN IMMEDIATE",
        "UPDATE",
        "DELETE",  # the conversation's attachments (their files go once it commits)
        "DELETE",
    ]
    # The shortcuts use the driver's placeholders; clear() runs in Django's transaction,
    # so that its files are deleted once it commits (store.attachments.remove_of).
    assert all("%s" not in sql for sql in seen.sql[:7])
    assert all("?" not in sql for sql in seen.sql[8:])
    assert not connection.connection.in_transaction
    assert connection.get_autocommit()
    assert not connection.in_atomic_block
    assert AgentSession.objects.get(session_id=session_id).item_count == 0


def test_django_cursor_wrapper_execute_assumption():
    # sqlite3's own cursor inside one wrap_database_errors block does what
    # CursorWrapper.execute does when no execute_wrapper is installed: it must be told
    # if Django's path does more.
    assert transactions._cursor_wrapper_is_djangos()
    assert set(CursorWrapper._execute.__code__.co_names) <= {
        "apps",
        "ready",
        "stored_app_configs",
        "warnings",
        "warn",
        "APPS_NOT_READY_WARNING_MSG",
        "RuntimeWarning",
        "db",
        "validate_no_broken_transaction",
        "wrap_database_errors",
        "cursor",
        "execute",
    }, "CursorWrapper._execute does something new"
    assert "execute_wrappers" in CursorWrapper._execute_with_wrappers.__code__.co_names


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_shortcut_cursor_skips_only_an_empty_wrapper_chain(session_id):
    storage.append_items(scope(session_id), encoded("first"), "")
    raw = connection.connection
    assert type(transactions.driver_cursor(connection, raw)) is sqlite3.Cursor
    with connection.execute_wrapper(Statements()):
        assert type(transactions.driver_cursor(connection, raw)) is CursorWrapper


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_the_shortcut_cursor_is_kept_for_the_next_operation_on_its_connection(session_id):
    storage.append_items(scope(session_id), encoded("first"), "")
    storage.append_items(scope(session_id), encoded("a"), "")
    kept = _kept_cursor()
    assert storage.read_items(scope(session_id), 20)
    assert storage.pop_newest(scope(session_id))["content"] == "a"
    assert _kept_cursor() is kept
    # A reopened connection gets a cursor of its own.
    connection.close()
    assert storage.read_items(scope(session_id), 20)
    assert _kept_cursor() is not kept
    assert _kept_cursor().connection is connection.connection


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_failed_operation_closes_the_kept_cursor(session_id, make_user):
    owner = make_user("owner")
    storage.append_items(scope(session_id, owner.pk), encoded("first"), "")  # creates it
    storage.read_items(scope(session_id, owner.pk), None)
    kept = _kept_cursor()
    with pytest.raises(SessionOwnershipError):
        storage.pop_newest(scope(session_id, owner.pk + 1))
    assert getattr(connection, transactions._KEPT, None) is None
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        kept.execute("SELECT 1")
    assert [i["content"] for i in storage.read_items(scope(session_id, owner.pk), None)] == [
        "first"
    ]


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_kept_cursor_holds_no_statement_in_progress(session_id):
    # A statement in progress keeps a read snapshot open, and then the WAL cannot be
    # checkpointed (it grows without bound on a busy server). The probe must see one.
    storage.append_items(scope(session_id), encoded("a", "b", "c"), "")
    reader = connection.connection.cursor()
    reader.execute(f"SELECT id FROM {SessionItem._meta.db_table}")
    reader.fetchone()
    assert _checkpoint_blocked()
    reader.close()
    assert not _checkpoint_blocked()
    operations = [
        lambda: storage.append_items(scope(session_id), encoded("d", "e"), ""),
        lambda: storage.read_items(scope(session_id), 2),
        lambda: storage.read_items(scope(session_id), None),
        lambda: storage.pop_newest(scope(session_id)),
        lambda: storage.take_back_last_turn(scope(session_id)),
        lambda: compaction.snapshot(scope(session_id), 1),
        lambda: storage.clear(scope(session_id)),
    ]
    for operation in operations:
        operation()
        assert type(_kept_cursor()) is sqlite3.Cursor
        assert not _checkpoint_blocked(), operation


def _kept_cursor() -> Any:
    return getattr(connection, transactions._KEPT)[1]


def _checkpoint_blocked() -> bool:
    other = sqlite3.connect(connection.settings_dict["NAME"], timeout=0)
    try:
        # Another connection's write first, so that there is something to checkpoint.
        other.execute("PRAGMA user_version = user_version")
        other.execute(f"UPDATE {AgentSession._meta.db_table} SET title = title")
        other.commit()
        busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return bool(busy)
    finally:
        other.close()


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_patched_cursor_wrapper_sees_every_shortcut_statement(session_id, monkeypatch):
    # How APM agents (Sentry, New Relic, Datadog) watch queries: they replace
    # CursorWrapper's methods. The shortcut must then go through them.
    seen: list[str] = []
    django_execute = CursorWrapper.execute

    def watched(self: CursorWrapper, sql: str, params: Any = None) -> Any:
        seen.append(sql.split()[0])
        return django_execute(self, sql, params)

    storage.append_items(scope(session_id), encoded("first"), "")
    monkeypatch.setattr(CursorWrapper, "execute", watched)
    assert not transactions._cursor_wrapper_is_djangos()
    storage.append_items(scope(session_id), encoded("a"), "")
    assert storage.pop_newest(scope(session_id))["content"] == "a"
    assert len(storage.read_items(scope(session_id), 20)) == 1
    assert seen == ["BEGIN", "UPDATE", "INSERT", "BEGIN", "UPDATE", "DELETE", "SELECT"]
    monkeypatch.undo()
    assert transactions._cursor_wrapper_is_djangos()
