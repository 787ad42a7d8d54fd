"""Failures on the SQLite shortcut: a failing statement, commit or rollback surfaces as the
error Django would raise and the write is rolled back whole; neither a failure nor an
ownership refusal leaves a transaction open.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import django.db.utils
import pytest
from django.db import connection

from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import items as storage
from django_agent_sessions.store import transactions
from tests.shortcuts_helpers import encoded, only_sqlite, scope


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_shortcut_statement_error_is_translated_and_rolled_back(session_id, monkeypatch):
    storage.append_items(scope(session_id), encoded("first"), "")
    with pytest.raises(django.db.utils.OperationalError):
        transactions.select(connection, lambda sql: ("SELECT * FROM no_such_table", []))
    assert getattr(connection, transactions._KEPT, None) is None  # a failed read's cursor goes
    monkeypatch.setattr(
        transactions.Statements, "insert", lambda self, rows: "INSERT INTO no_such_table VALUES (1)"
    )
    with pytest.raises(django.db.utils.OperationalError):
        storage.append_items(scope(session_id), encoded("lost"), "")
    assert not connection.connection.in_transaction
    assert AgentSession.objects.get(session_id=session_id).item_count == 1


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_failing_commit_is_translated_and_rolled_back(session_id):
    # Django's SQLite foreign keys are deferred: an item of no conversation fails at COMMIT.
    storage.append_items(scope(session_id), encoded("first"), "")
    columns = "session_id, payload, item_type, role, call_id, preview, created_at"
    with (
        pytest.raises(django.db.utils.IntegrityError, match="FOREIGN KEY"),
        transactions.writing(connection, "default") as (cursor, _),
    ):
        cursor.execute(
            f"INSERT INTO {SessionItem._meta.db_table} ({columns}) "
            "VALUES (0, '{}', '', '', '', '', '2000-01-01 00:00:00')"
        )
    assert not connection.connection.in_transaction
    assert getattr(connection, transactions._KEPT, None) is None
    assert [i["content"] for i in storage.read_items(scope(session_id), None)] == ["first"]


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_connection_closed_by_a_failed_rollback_does_not_hide_the_error(session_id, monkeypatch):
    # _roll_back closes a connection that cannot roll back (as atomic() does); closing
    # the operation's cursor afterwards must not replace the error in flight.
    storage.append_items(scope(session_id), encoded("first"), "")

    def rollback_fails(connection: Any, raw: sqlite3.Connection) -> None:
        raw.rollback()
        connection.close()

    monkeypatch.setattr(transactions, "_roll_back", rollback_fails)
    with pytest.raises(LookupError, match="in flight"):
        _write_then_fail()
    with pytest.raises(LookupError, match="in flight"):
        _read_on_a_closed_connection_then_fail()


def _write_then_fail() -> None:
    with transactions.writing(connection, "default") as (cursor, sql):
        cursor.execute(sql.touch, ["2000-01-01 00:00:00", 0])
        raise LookupError("in flight")


def _read_on_a_closed_connection_then_fail() -> None:
    def close_then_fail(sql: Any) -> tuple[str, list[Any]]:
        connection.close()
        raise LookupError("in flight")

    transactions.select(connection, close_then_fail)


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_failing_shortcut_write_rolls_back_everything(session_id, monkeypatch, make_user):
    storage.append_items(scope(session_id), encoded("kept"), "")

    def broken(*args: Any) -> None:
        raise RuntimeError("the insert failed")

    monkeypatch.setattr(storage, "_insert_items", broken)
    with pytest.raises(RuntimeError, match="the insert failed"):
        storage.append_items(scope(session_id), encoded("lost"), "")
    monkeypatch.undo()
    assert not connection.connection.in_transaction
    assert AgentSession.objects.get(session_id=session_id).item_count == 1
    # An ownership refusal: nothing written, no transaction left open.
    owner = make_user("someone")
    with pytest.raises(SessionOwnershipError):
        storage.append_items(scope(session_id, owner.pk), encoded("refused"), "")
    with pytest.raises(SessionOwnershipError):
        storage.pop_newest(scope(session_id, owner.pk))
    assert not connection.connection.in_transaction
    assert SessionItem.objects.filter(session__session_id=session_id).count() == 1
    assert AgentSession.objects.get(session_id=session_id).item_count == 1
