"""The synchronous, transactional half of ``DjangoSession``.

Each public function here is one whole operation: ``DjangoSession`` calls exactly one of
them per ``sync_to_async`` hop. Every mutation's first statement is an ``UPDATE`` of the
conversation row. That takes the row lock on PostgreSQL and the write lock on SQLite, so
concurrent writers to one conversation are serialised for the whole transaction: ids are
assigned in commit order, batches never interleave, and a pop claims exactly one item.
Raw SQL is used only where the ORM has no single-statement form (``UPDATE ... RETURNING``,
``DELETE ... RETURNING``); it needs SQLite >= 3.35 or PostgreSQL (a system check says so).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from django_agent_sessions import serialization
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.serialization import EncodedItem


@dataclass(frozen=True)
class Scope:
    """Which conversation an operation targets, and on whose behalf.

    ``owner_id`` None means trusted server code: no ownership check.
    """

    session_id: str
    owner_id: Any
    using: str


@dataclass(frozen=True)
class _Locked:
    pk: int
    owner_id: Any


def read_items(scope: Scope, limit: int | None) -> list[Any]:
    """The newest ``limit`` items (all when None), oldest first.

    Exactly ``limit`` items when that many decodable rows exist: a row that does not
    decode is skipped without using up a slot (the window widens, as in the SDK's SQL
    stores). One query unless such a row sits among the newest.
    """
    connection = _connection(scope.using)
    statements = _statements(connection)
    # A non-positive limit still runs the (one-row) query, so that a foreign
    # conversation is refused rather than answered with an empty list.
    window = None if limit is None else max(limit, 1)
    while True:
        sql, params = _read_sql(statements, scope.session_id, window)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        if not rows:
            return []
        _check_owner(scope, rows[0][0])
        if limit is not None and limit <= 0:
            return []
        payloads = [payload for _, payload in rows if payload is not None]
        if window is None:
            return serialization.decode_payloads(payloads)
        payloads.reverse()
        items = serialization.decode_payloads(payloads)
        if len(items) >= limit:
            return items[-limit:]
        if len(payloads) < window:
            return items
        window *= 2


def append_items(scope: Scope, encoded: list[EncodedItem], title: str) -> None:
    """Store a validated batch after the conversation's last item, atomically."""
    connection = _connection(scope.using)
    now = timezone.now()
    with transaction.atomic(using=scope.using), connection.cursor() as cursor:
        locked = _lock(cursor, connection, scope, now, count_delta=len(encoded), title=title)
        if locked is None:
            _create(scope, now, title)
            locked = _lock(cursor, connection, scope, now, count_delta=len(encoded), title=title)
            assert locked is not None, "the conversation row was just created"
        _check_owner(scope, locked.owner_id)
        _insert_items(cursor, connection, locked.pk, encoded, now)


def pop_newest(scope: Scope) -> Any:
    """Remove and return the newest item, or None; exactly once under concurrency."""
    connection = _connection(scope.using)
    now = timezone.now()
    with transaction.atomic(using=scope.using), connection.cursor() as cursor:
        locked = _lock(cursor, connection, scope, now, count_delta=-1)
        if locked is None:
            return None
        _check_owner(scope, locked.owner_id)
        sql = _statements(connection).pop
        while True:
            cursor.execute(sql, [locked.pk])
            row = cursor.fetchone()
            if row is None:
                return None
            decoded = serialization.decode_payloads([row[0]])
            if decoded:
                return decoded[0]
            # A row that no longer decodes is dropped; keep looking for a real item.


def clear(scope: Scope) -> None:
    """Delete every item; the conversation row (owner, title) stays."""
    connection = _connection(scope.using)
    with transaction.atomic(using=scope.using), connection.cursor() as cursor:
        locked = _lock(cursor, connection, scope, timezone.now(), count_delta=None)
        if locked is None:
            return
        _check_owner(scope, locked.owner_id)
        delete_items_of(connection, [locked.pk])


@dataclass(frozen=True)
class Snapshot:
    """The newest rows of a conversation, for compaction (see ``compaction_snapshot``)."""

    row_ids: list[int]
    items: list[Any]
    complete: bool


def compaction_snapshot(scope: Scope, limit: int) -> Snapshot:
    """The newest ``limit`` readable rows, oldest first, with their ids.

    ``complete`` says that nothing older exists. A row that does not decode is never
    part of a snapshot: the snapshot starts after the newest such row (and is then not
    complete), so a compaction cannot replace, and so delete, what it could not read.
    One query: ``limit + 1`` rows tell completeness without reading the prefix.
    """
    connection = _connection(scope.using)
    sql, params = _read_sql(_statements(connection), scope.session_id, max(limit, 0) + 1, True)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return Snapshot([], [], True)
    _check_owner(scope, rows[0][0])
    stored = [(row_id, payload) for _, row_id, payload in rows if row_id is not None]
    complete = len(stored) <= limit
    stored = stored[:limit]
    stored.reverse()
    row_ids: list[int] = []
    items: list[Any] = []
    for row_id, payload in stored:
        decoded = serialization.decode_payloads([payload])
        if decoded:
            row_ids.append(row_id)
            items.append(decoded[0])
        else:
            row_ids.clear()
            items.clear()
            complete = False
    return Snapshot(row_ids, items, complete)


def replace_suffix(
    scope: Scope,
    expected_ids: list[int],
    encoded: list[EncodedItem],
    prune_prefix: Callable[[Any], bool] | None,
    prune_batch: int,
) -> bool:
    """Replace the rows ``expected_ids`` (the conversation's newest) with ``encoded``.

    One transaction, parent row locked first. Returns False, changing nothing, when
    the newest rows are no longer exactly ``expected_ids``: another writer appended,
    popped or cleared since the snapshot was read (ids are never reused, and stored
    rows never change, so equal ids mean equal rows). ``prune_prefix`` (the SDK's
    EncryptedSession passes one) also deletes the contiguous run of oldest rows it
    accepts, in batches, stopping at the first row it rejects or cannot decode.
    """
    if not expected_ids:
        return False
    connection = _connection(scope.using)
    now = timezone.now()
    statements = _statements(connection)
    with transaction.atomic(using=scope.using), connection.cursor() as cursor:
        locked = _lock(cursor, connection, scope, now, count_delta=0)
        if locked is None:
            return False
        _check_owner(scope, locked.owner_id)
        cursor.execute(statements.newest_ids, [locked.pk, len(expected_ids)])
        if [row[0] for row in reversed(cursor.fetchall())] != expected_ids:
            return False
        removed = 0
        if prune_prefix is not None:
            removed += _prune_prefix(
                cursor, statements, locked.pk, expected_ids[0], prune_prefix, max(prune_batch, 1)
            )
        cursor.execute(statements.delete_from, [locked.pk, expected_ids[0]])
        removed += int(cursor.rowcount)
        _insert_items(cursor, connection, locked.pk, encoded, now)
        delta = len(encoded) - removed
        cursor.execute(statements.recount, [delta, delta, locked.pk])
    return True


def _prune_prefix(
    cursor: CursorWrapper,
    statements: _Statements,
    session_pk: int,
    before_id: int,
    prune: Callable[[Any], bool],
    batch: int,
) -> int:
    removed = 0
    while True:
        cursor.execute(statements.oldest_before, [session_pk, before_id, batch])
        rows = cursor.fetchall()
        expired_end = None
        for row_id, payload in rows:
            decoded = serialization.decode_payloads([payload])
            if not decoded or not prune(decoded[0]):
                break
            expired_end = row_id
        if expired_end is None:
            return removed
        cursor.execute(statements.delete_through, [session_pk, expired_end])
        removed += int(cursor.rowcount)
        if expired_end != rows[-1][0] or len(rows) < batch:
            return removed


def delete_items_of(connection: BaseDatabaseWrapper, session_pks: list[int]) -> int:
    """One DELETE for the items of these conversations; never loads them."""
    if not session_pks:
        return 0
    placeholders = ", ".join(["%s"] * len(session_pks))
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {_table(connection, SessionItem)} WHERE session_id IN ({placeholders})",
            session_pks,
        )
        return int(cursor.rowcount)


def _lock(
    cursor: CursorWrapper,
    connection: BaseDatabaseWrapper,
    scope: Scope,
    now: Any,
    *,
    count_delta: int | None,
    title: str = "",
) -> _Locked | None:
    """Write the conversation row first: it is the lock every mutation queues on."""
    params: list[Any] = [connection.ops.adapt_datetimefield_value(now)]
    if count_delta is not None and count_delta >= 0:
        params.append(count_delta)
    if title:
        params.append(title)
    params.append(scope.session_id)
    count_change = "reset" if count_delta is None else "add" if count_delta >= 0 else "pop"
    cursor.execute(_statements(connection).lock(count_change, bool(title)), params)
    row = cursor.fetchone()
    return None if row is None else _Locked(pk=row[0], owner_id=row[1])


# Rows per INSERT: 7 parameters each stays far below every SQLite build's variable limit.
_INSERT_CHUNK = 500


def _insert_items(
    cursor: CursorWrapper,
    connection: BaseDatabaseWrapper,
    session_pk: int,
    encoded: list[EncodedItem],
    now: Any,
) -> None:
    """One multi-row INSERT per chunk. Measured: ``bulk_create`` spent more time building
    model instances and array parameters than the database spent storing the rows."""
    created_at = connection.ops.adapt_datetimefield_value(now)
    statements = _statements(connection)
    for start in range(0, len(encoded), _INSERT_CHUNK):
        chunk = encoded[start : start + _INSERT_CHUNK]
        params: list[Any] = []
        for item in chunk:
            params += [session_pk, *item, created_at]  # EncodedItem is in column order
        cursor.execute(statements.insert(len(chunk)), params)


def _create(scope: Scope, now: Any, title: str) -> None:
    # ignore_conflicts: a concurrent first writer may have created it; then the
    # following _lock() waits for that writer and the owner check decides.
    AgentSession.objects.using(scope.using).bulk_create(
        [
            AgentSession(
                session_id=scope.session_id,
                owner_id=scope.owner_id,
                title=title,
                created_at=now,
                updated_at=now,
            )
        ],
        ignore_conflicts=True,
    )


def _check_owner(scope: Scope, stored_owner_id: Any) -> None:
    if scope.owner_id is not None and stored_owner_id != scope.owner_id:
        raise SessionOwnershipError(
            "This conversation belongs to another user."  # same words whoever owns it
        )


def _read_sql(
    statements: _Statements, session_id: str, limit: int | None, with_ids: bool = False
) -> tuple[str, list[Any]]:
    if limit is None:
        return statements.read_all, [session_id]
    sql = statements.read_newest_with_ids if with_ids else statements.read_newest
    if statements.limit_first:
        return sql, [max(limit, 1), session_id]
    return sql, [session_id, max(limit, 1)]


class _Statements:
    """The SQL of every operation for one database vendor, built once and reused."""

    def __init__(self, vendor: str, sessions: str, items: str) -> None:
        self._sessions, self._items = sessions, items
        self.pop = (
            f"DELETE FROM {items} WHERE id = (SELECT id FROM {items} WHERE session_id = %s "
            "ORDER BY id DESC LIMIT 1) RETURNING payload"
        )
        self.newest_ids = (
            f"SELECT id FROM {items} WHERE session_id = %s ORDER BY id DESC LIMIT %s"
        )
        self.oldest_before = (
            f"SELECT id, payload FROM {items} WHERE session_id = %s AND id < %s "
            "ORDER BY id ASC LIMIT %s"
        )
        self.delete_from = f"DELETE FROM {items} WHERE session_id = %s AND id >= %s"
        self.delete_through = f"DELETE FROM {items} WHERE session_id = %s AND id <= %s"
        self.recount = (
            f"UPDATE {sessions} SET item_count = CASE WHEN item_count + %s > 0 "
            "THEN item_count + %s ELSE 0 END WHERE id = %s"
        )
        # LEFT JOIN: one row with a NULL payload still tells us the owner of an empty
        # conversation, so the ownership check costs no second query.
        if vendor == "postgresql":
            # LATERAL pins the plan to the (session, id) index. Measured with the plain
            # join: once one conversation held 1M items, PostgreSQL hash-joined the whole
            # items table for every read (200-600 ms, even for a 100-item conversation).
            self.limit_first = True
            self.read_all, self.read_newest, self.read_newest_with_ids = (
                f"SELECT s.owner_id, {columns} FROM {sessions} s LEFT JOIN LATERAL ("
                f"SELECT id, payload FROM {items} WHERE session_id = s.id "
                f"ORDER BY id {order}{window}) i ON TRUE WHERE s.session_id = %s "
                f"ORDER BY i.id {order}"
                for order, window, columns in (
                    ("ASC", "", "i.payload"),
                    ("DESC", " LIMIT %s", "i.payload"),
                    ("DESC", " LIMIT %s", "i.id, i.payload"),
                )
            )
        else:
            self.limit_first = False
            join = (
                f"SELECT s.owner_id, i.payload FROM {sessions} s "
                f"LEFT JOIN {items} i ON i.session_id = s.id WHERE s.session_id = %s "
            )
            self.read_all = join + "ORDER BY i.id ASC"
            self.read_newest = join + "ORDER BY i.id DESC LIMIT %s"
            self.read_newest_with_ids = (
                join.replace("i.payload", "i.id, i.payload", 1) + "ORDER BY i.id DESC LIMIT %s"
            )

    @functools.cache  # noqa: B019  # a handful of instances that live as long as the process
    def lock(self, count_change: str, with_title: bool) -> str:
        count = {
            "add": "item_count + %s",
            "pop": "CASE WHEN item_count > 0 THEN item_count - 1 ELSE 0 END",
            "reset": "0",
        }[count_change]
        title = ", title = CASE WHEN title = '' THEN %s ELSE title END" if with_title else ""
        return (
            f"UPDATE {self._sessions} SET updated_at = %s, item_count = {count}{title} "
            "WHERE session_id = %s RETURNING id, owner_id"
        )

    @functools.cache  # noqa: B019
    def insert(self, rows: int) -> str:
        values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * rows)
        return (
            f"INSERT INTO {self._items} (session_id, payload, item_type, role, call_id, "
            f"preview, created_at) VALUES {values}"
        )


@functools.cache
def _statements_for(vendor: str, sessions: str, items: str) -> _Statements:
    return _Statements(vendor, sessions, items)


def _statements(connection: BaseDatabaseWrapper) -> _Statements:
    return _statements_for(
        connection.vendor, _table(connection, AgentSession), _table(connection, SessionItem)
    )


def _table(connection: BaseDatabaseWrapper, model: type[Any]) -> str:
    return str(connection.ops.quote_name(model._meta.db_table))


def _connection(using: str) -> BaseDatabaseWrapper:
    """The connection for ``using``, replaced first if its last query broke it.

    Consumers and run_sync threads live longer than a request, so Django's own
    per-request cleanup never runs for them; without this, one database restart
    would fail every later operation on that thread.
    """
    connection = connections[using]
    if connection.errors_occurred and not connection.in_atomic_block:
        connection.close_if_unusable_or_obsolete()
    return connection
