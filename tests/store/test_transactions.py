"""``store.transactions``: how an operation's statements reach the database, on the general
path (``atomic()``) or the SQLite shortcut, with the same outcome either way.

``tests/test_shortcuts_*.py`` check the Django, sqlite3 and asgiref internals the
shortcut relies on; these check this module's contract on both databases: when the
shortcut is taken, that a mutation commits or rolls back whole, and that a database error
surfaces as Django's own exception with the connection still usable.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import bridge, transactions
from tests.conftest import user_message
from tests.store.helpers import item_ids, write

# The shortcut only runs outside any transaction: the test must not wrap one around it.
pytestmark = pytest.mark.django_db(transaction=True)


def count(row: AgentSession) -> int:
    return AgentSession.objects.get(pk=row.pk).item_count


def in_transaction() -> bool:
    """Whether a transaction is open: Django's atomic block, or the shortcut's BEGIN."""
    raw: Any = connection.connection
    return connection.in_atomic_block or bool(getattr(raw, "in_transaction", False))


def test_the_shortcut_is_taken_only_on_sqlite_outside_any_transaction() -> None:
    connection.ensure_connection()
    assert transactions.sqlite_shortcut_supported()  # this Django has what it needs
    if connection.vendor == "sqlite":
        assert transactions.driver(connection) is connection.connection
        assert isinstance(connection.connection, sqlite3.Connection)
    else:
        assert transactions.driver(connection) is None
    # Inside a caller's transaction, under query logging, or when asked not to, it is not.
    with transaction.atomic():
        assert transactions.driver(connection) is None
    with CaptureQueriesContext(connection):
        assert transactions.driver(connection) is None
    with bridge.shipped_path():
        assert transactions.driver(connection) is None


@pytest.mark.parametrize("shortcut", [True, False], ids=["shortcut", "general"])
def test_a_mutation_commits_whole(session_id: str, shortcut: bool) -> None:
    row = write(session_id, user_message("a"))
    with transactions.writing(connection, "default", shortcut=shortcut) as (cursor, sql):
        assert in_transaction()
        # The SQLite shortcut speaks the driver's ? placeholders; Django's cursor, %s.
        assert sql.qmark == (shortcut and connection.vendor == "sqlite")
        cursor.execute(sql.recount, [2, 2, row.pk])
        cursor.execute(sql.recount, [3, 3, row.pk])
    assert not in_transaction()
    assert count(row) == 6


class Refused(Exception):
    """The caller's own reason to give up a mutation."""


def refuse(cursor: Any) -> None:
    raise Refused


def fail_in_the_database(cursor: Any) -> None:
    cursor.execute("SELECT no_such_column FROM no_such_table")


def add_five_then(row: AgentSession, shortcut: bool, then: Callable[[Any], None]) -> None:
    """One mutation: a statement that would add five items to the count, then ``then``."""
    with transactions.writing(connection, "default", shortcut=shortcut) as (cursor, sql):
        cursor.execute(sql.recount, [5, 5, row.pk])
        then(cursor)


@pytest.mark.parametrize("shortcut", [True, False], ids=["shortcut", "general"])
def test_an_error_in_a_mutation_rolls_it_back_whole(session_id: str, shortcut: bool) -> None:
    row = write(session_id, user_message("a"))
    with pytest.raises(Refused):  # the caller's own exception, unchanged
        add_five_then(row, shortcut, refuse)
    assert not in_transaction()
    assert count(row) == 1


@pytest.mark.parametrize("shortcut", [True, False], ids=["shortcut", "general"])
def test_a_database_error_is_djangos_and_leaves_the_connection_usable(
    session_id: str, shortcut: bool
) -> None:
    row = write(session_id, user_message("a"))
    with pytest.raises(DatabaseError) as raised:
        add_five_then(row, shortcut, fail_in_the_database)
    # Django's exception (what the general path raises), never the driver's own.
    assert not isinstance(raised.value, sqlite3.Error)
    assert not in_transaction()
    assert count(row) == 1
    # The next mutation on the same connection works.
    add_five_then(row, shortcut, lambda cursor: None)
    assert count(row) == 6


def test_select_reads_on_either_path(session_id: str) -> None:
    row = write(session_id, user_message("a"), user_message("b"))

    def newest_ids(sql: Any, pk: int, limit: int) -> tuple[str, list[Any]]:
        return sql.newest_ids, [pk, limit]

    expected = transactions.select(connection, newest_ids, row.pk, 1)
    assert len(expected) == 1
    with transaction.atomic():  # the general path, inside a caller's transaction
        assert transactions.select(connection, newest_ids, row.pk, 1) == expected
    with pytest.raises(DatabaseError) as raised:
        transactions.select(connection, lambda sql: ("SELECT * FROM no_such_table", []))
    assert not isinstance(raised.value, sqlite3.Error)
    # The failed read left nothing behind: the next one reads as before.
    newest_first = [found[0] for found in transactions.select(connection, newest_ids, row.pk, 5)]
    assert newest_first == item_ids(session_id)[::-1]
    assert [found[0] for found in expected] == newest_first[:1]
