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

import contextlib
import functools
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.db import connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from django_agent_sessions import hops, serialization
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


class _Locked(NamedTuple):
    """The locked conversation row (a named tuple: built on every mutation)."""

    pk: int
    owner_id: Any


def read_items(scope: Scope, limit: int | None) -> list[Any]:
    """The newest ``limit`` items (all when None), oldest first, in one query."""
    connection = _connection(scope.using)
    with _reading(connection) as (cursor, statements):
        # A non-positive limit still runs the (one-row) query, so that a foreign
        # conversation is refused rather than answered with an empty list.
        sql, params = _read_sql(statements, scope.session_id, limit)
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return []
    _check_owner(scope, rows[0][0])
    if limit is not None and limit <= 0:
        return []
    payloads = [payload for _, payload in rows if payload is not None]
    if limit is not None:
        payloads.reverse()
    items = serialization.decode_payloads(payloads)
    if limit is not None:
        items = serialization.drop_orphan_outputs(items)
    return items


def append_items(scope: Scope, encoded: list[EncodedItem], title: str) -> None:
    """Store a validated batch after the conversation's last item, atomically."""
    try:
        _append_items(scope, encoded, title, shortcut=True)
    except _FirstWrite:
        # The conversation does not exist yet: create it on the general path.
        _append_items(scope, encoded, title, shortcut=False)


def _append_items(scope: Scope, encoded: list[EncodedItem], title: str, *, shortcut: bool) -> None:
    connection = _connection(scope.using)
    now = timezone.now()
    stamp = connection.ops.adapt_datetimefield_value(now)
    count = len(encoded)
    with _writing(connection, scope.using, shortcut) as (cursor, statements):
        locked = _lock(cursor, statements, scope, stamp, count_delta=count, title=title)
        if locked is None:
            if statements.shortcut:
                raise _FirstWrite
            _create(scope, now, title)
            locked = _lock(cursor, statements, scope, stamp, count_delta=count, title=title)
            assert locked is not None, "the conversation row was just created"
        _check_owner(scope, locked.owner_id)
        _insert_items(cursor, statements, locked.pk, encoded, stamp)


def pop_newest(scope: Scope) -> Any:
    """Remove and return the newest item, or None; exactly once under concurrency."""
    connection = _connection(scope.using)
    stamp = connection.ops.adapt_datetimefield_value(timezone.now())
    with _writing(connection, scope.using) as (cursor, statements):
        locked = _lock(cursor, statements, scope, stamp, count_delta=-1)
        if locked is None:
            return None
        _check_owner(scope, locked.owner_id)
        sql = statements.pop
        while True:
            row = _fetchone(cursor, statements, sql, [locked.pk])
            if row is None:
                return None
            decoded = serialization.decode_payloads([row[0]])
            if decoded:
                return decoded[0]
            # A row that no longer decodes is dropped; keep looking for a real item.


def clear(scope: Scope) -> None:
    """Delete every item; the conversation row (owner, title) stays."""
    connection = _connection(scope.using)
    with _writing(connection, scope.using) as (cursor, statements):
        stamp = connection.ops.adapt_datetimefield_value(timezone.now())
        locked = _lock(cursor, statements, scope, stamp, count_delta=None)
        if locked is None:
            return
        _check_owner(scope, locked.owner_id)
        delete_items_of(connection, [locked.pk])


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
    statements: _Statements,
    scope: Scope,
    stamp: Any,
    *,
    count_delta: int | None,
    title: str = "",
) -> _Locked | None:
    """Write the conversation row first: it is the lock every mutation queues on."""
    params: list[Any] = [stamp]  # updated_at, adapted for the database
    if count_delta is not None and count_delta >= 0:
        params.append(count_delta)
    if title:
        params.append(title)
    params.append(scope.session_id)
    count_change = "reset" if count_delta is None else "add" if count_delta >= 0 else "pop"
    row = _fetchone(cursor, statements, statements.lock(count_change, bool(title)), params)
    return None if row is None else _Locked._make(row)


def _fetchone(cursor: CursorWrapper, statements: _Statements, sql: str, params: list[Any]) -> Any:
    """Execute, then take the one row. On the SQLite shortcut the row is read from the
    driver's cursor directly (``CursorWrapper`` builds an error-translating wrapper for
    every ``fetchone`` it passes on; sqlite3 has already run a ``RETURNING`` statement to
    its end inside ``execute``, so no error can surface in the fetch)."""
    cursor.execute(sql, params)
    if statements.shortcut:
        return cursor.cursor.fetchone()
    return cursor.fetchone()


# Rows per INSERT: 7 parameters each stays far below every SQLite build's variable limit.
_INSERT_CHUNK = 500


def _insert_items(
    cursor: CursorWrapper,
    statements: _Statements,
    session_pk: int,
    encoded: list[EncodedItem],
    created_at: Any,
) -> None:
    """One multi-row INSERT per chunk. Measured: ``bulk_create`` spent more time building
    model instances and array parameters than the database spent storing the rows."""
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


def _read_sql(statements: _Statements, session_id: str, limit: int | None) -> tuple[str, list[Any]]:
    if limit is None:
        return statements.read_all, [session_id]
    if statements.limit_first:
        return statements.read_newest, [max(limit, 1), session_id]
    return statements.read_newest, [session_id, max(limit, 1)]


class _Statements:
    """The SQL of every operation for one database vendor, built once and reused."""

    def __init__(self, vendor: str, sessions: str, items: str, shortcut: bool = False) -> None:
        # ``shortcut``: the SQL goes to sqlite3's own cursor, so it is written with the
        # driver's ``?`` placeholders (Django's SQLite cursor rewrites ``%s`` to ``?`` with
        # a regular expression on every execute). None of the SQL holds a literal ``%``.
        self.shortcut = shortcut
        self._sessions, self._items = sessions, items
        self.pop = (
            f"DELETE FROM {items} WHERE id = (SELECT id FROM {items} WHERE session_id = %s "
            "ORDER BY id DESC LIMIT 1) RETURNING payload"
        )
        # LEFT JOIN: one row with a NULL payload still tells us the owner of an empty
        # conversation, so the ownership check costs no second query.
        if vendor == "postgresql":
            # LATERAL pins the plan to the (session, id) index. Measured with the plain
            # join: once one conversation held 1M items, PostgreSQL hash-joined the whole
            # items table for every read (200-600 ms, even for a 100-item conversation).
            self.limit_first = True
            self.read_all, self.read_newest = (
                f"SELECT s.owner_id, i.payload FROM {sessions} s LEFT JOIN LATERAL ("
                f"SELECT id, payload FROM {items} WHERE session_id = s.id "
                f"ORDER BY id {order}{window}) i ON TRUE WHERE s.session_id = %s "
                f"ORDER BY i.id {order}"
                for order, window in (("ASC", ""), ("DESC", " LIMIT %s"))
            )
        else:
            self.limit_first = False
            join = (
                f"SELECT s.owner_id, i.payload FROM {sessions} s "
                f"LEFT JOIN {items} i ON i.session_id = s.id WHERE s.session_id = %s "
            )
            self.read_all = join + "ORDER BY i.id ASC"
            self.read_newest = join + "ORDER BY i.id DESC LIMIT %s"
        self.pop, self.read_all, self.read_newest = map(
            self._style, (self.pop, self.read_all, self.read_newest)
        )

    def _style(self, sql: str) -> str:
        return sql.replace("%s", "?") if self.shortcut else sql

    @functools.cache  # noqa: B019  # a handful of instances that live as long as the process
    def lock(self, count_change: str, with_title: bool) -> str:
        count = {
            "add": "item_count + %s",
            "pop": "CASE WHEN item_count > 0 THEN item_count - 1 ELSE 0 END",
            "reset": "0",
        }[count_change]
        title = ", title = CASE WHEN title = '' THEN %s ELSE title END" if with_title else ""
        return self._style(
            f"UPDATE {self._sessions} SET updated_at = %s, item_count = {count}{title} "
            "WHERE session_id = %s RETURNING id, owner_id"
        )

    @functools.cache  # noqa: B019
    def insert(self, rows: int) -> str:
        values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * rows)
        return self._style(
            f"INSERT INTO {self._items} (session_id, payload, item_type, role, call_id, "
            f"preview, created_at) VALUES {values}"
        )


@functools.cache
def _statements_for(vendor: str, sessions: str, items: str, shortcut: bool) -> _Statements:
    return _Statements(vendor, sessions, items, shortcut)


def _statements(connection: BaseDatabaseWrapper, shortcut: bool = False) -> _Statements:
    # Table names depend only on the vendor's quoting: one dictionary lookup per operation.
    key = (connection.vendor, shortcut)
    statements = _BY_VENDOR.get(key)
    if statements is None:
        statements = _BY_VENDOR[key] = _statements_for(
            connection.vendor,
            _table(connection, AgentSession),
            _table(connection, SessionItem),
            shortcut,
        )
    return statements


_BY_VENDOR: dict[tuple[str, bool], _Statements] = {}


# -- how statements reach the database --------------------------------------------------------
#
# The general path: ``transaction.atomic()`` and Django's cursor. On SQLite, where nothing
# needs them, the shortcut: ``BEGIN IMMEDIATE`` / ``COMMIT`` on the driver connection and
# sqlite3's own cursor inside Django's ``CursorWrapper`` (so ``execute_wrapper()``, error
# translation and ``errors_occurred`` still see every statement). Measured: atomic()'s
# bookkeeping and the per-statement placeholder rewrite were a third of a write's time in
# the worker thread. The shortcut is taken only when all of this holds, else the general
# path runs: SQLite; no atomic block and autocommit on (so no caller's transaction, no
# savepoints or on_commit hooks to honour); no query logging (``DEBUG``,
# ``assertNumQueries`` and the debug toolbar see exactly the general path's statements);
# the driver connection in its legacy transaction control with no transaction open; and
# ``sqlite_shortcut_supported()`` (tests/test_storage_shortcut.py checks the Django
# internals it names).


class _FirstWrite(Exception):
    """The shortcut met a conversation that does not exist yet."""


def sqlite_shortcut_supported() -> bool:
    """Whether this Django has the connection internals the shortcut uses."""
    from django.db.backends.sqlite3.base import DatabaseWrapper

    return all(
        callable(getattr(DatabaseWrapper, name, None))
        for name in ("_prepare_cursor", "ensure_connection", "get_autocommit", "is_usable")
    ) and isinstance(getattr(DatabaseWrapper, "queries_logged", None), property)


@functools.cache
def _shortcut_supported() -> bool:
    return sqlite_shortcut_supported()


def _driver(connection: BaseDatabaseWrapper) -> sqlite3.Connection | None:
    """The sqlite3 connection, if a shortcut may use it now; None for the general path."""
    if (
        connection.vendor != "sqlite"
        or connection.queries_logged
        or connection.in_atomic_block
        or not hops.shortcuts_allowed()
        or not _shortcut_supported()
    ):
        return None
    raw = connection.connection
    if raw is None:
        # (No health check to run first: Django's SQLite connections are always usable.)
        connection.ensure_connection()
        raw = connection.connection
    if (
        not connection.autocommit  # what get_autocommit() returns once connected
        or type(raw) is not sqlite3.Connection
        or raw.isolation_level is not None  # Django's autocommit mode
        or raw.in_transaction
        or getattr(raw, "autocommit", _LEGACY) != _LEGACY
    ):
        return None
    return raw


_LEGACY = getattr(sqlite3, "LEGACY_TRANSACTION_CONTROL", -1)


def _driver_cursor(connection: BaseDatabaseWrapper, raw: sqlite3.Connection) -> CursorWrapper:
    """sqlite3's own cursor, wrapped as Django wraps every cursor (what ``cursor()``
    does, minus the SQLite cursor subclass that rewrites placeholders)."""
    with connection.wrap_database_errors:
        return connection._prepare_cursor(raw.cursor())  # type: ignore[attr-defined,no-any-return]


@contextlib.contextmanager
def _reading(connection: BaseDatabaseWrapper) -> Iterator[tuple[CursorWrapper, _Statements]]:
    raw = _driver(connection)
    if raw is None:
        with connection.cursor() as cursor:
            yield cursor, _statements(connection)
        return
    with _driver_cursor(connection, raw) as cursor:
        yield cursor, _statements(connection, shortcut=True)


@contextlib.contextmanager
def _writing(
    connection: BaseDatabaseWrapper, using: str, shortcut: bool = True
) -> Iterator[tuple[CursorWrapper, _Statements]]:
    """One transaction around a mutation, with the cursor and SQL to use in it."""
    raw = _driver(connection) if shortcut else None
    if raw is None:
        with transaction.atomic(using=using), connection.cursor() as cursor:
            yield cursor, _statements(connection)
        return
    with _driver_cursor(connection, raw) as cursor:
        # IMMEDIATE whatever the configured transaction_mode: the first statement writes
        # anyway, and taking the write lock up front never fails a transaction midway.
        cursor.execute("BEGIN IMMEDIATE")
        try:
            yield cursor, _statements(connection, shortcut=True)
            with connection.wrap_database_errors:
                raw.commit()
        except BaseException:
            _roll_back(connection, raw)
            raise


def _roll_back(connection: BaseDatabaseWrapper, raw: sqlite3.Connection) -> None:
    try:
        if raw.in_transaction:
            with connection.wrap_database_errors:
                raw.rollback()
    except Exception:
        # As atomic() does: a connection that cannot roll back is dropped.
        connection.close()


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
