"""The synchronous, transactional half of ``DjangoSession``.

Each public function here is one whole operation: ``DjangoSession`` calls exactly one of
them per hop through ``bridge``. Every mutation's first statement is an ``UPDATE`` of the
conversation row. That takes the row lock on PostgreSQL and the write lock on SQLite, so
concurrent writers to one conversation are serialised for the whole transaction: ids are
assigned in commit order, batches never interleave, and a pop claims exactly one item.
The SQL text lives in ``statements``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

from django_agent_sessions import serialization
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.item_views import is_user_message
from django_agent_sessions.models import AgentSession
from django_agent_sessions.serialization import EncodedItem
from django_agent_sessions.store import attachments, search_batches
from django_agent_sessions.store.attachments import FilesByIndex
from django_agent_sessions.store.clock import Clock, read_clock
from django_agent_sessions.store.conversations import delete_items_of
from django_agent_sessions.store.health import replace_if_ended_by_server
from django_agent_sessions.store.statements import Statements
from django_agent_sessions.store.transactions import Cursor, FirstWrite, select, writing


class Scope(NamedTuple):
    """Which conversation an operation targets, and on whose behalf.

    ``owner_id`` None means trusted server code: no ownership check. A named tuple: one
    is built per operation, three times faster than a frozen dataclass.
    """

    session_id: str
    owner_id: Any
    using: str


class _Locked(NamedTuple):
    """The locked conversation row (a named tuple: one is built per mutation)."""

    pk: int
    owner_id: Any
    stale: bool  # updated_at must move (see UPDATED_AT_RESOLUTION)


def read_items(scope: Scope, limit: int | None) -> list[Any]:
    """The newest ``limit`` items (all when None), oldest first.

    Exactly ``limit`` items when that many decodable rows exist: a row that does not
    decode is skipped without using up a slot (the window widens, as in the SDK's SQL
    stores). One query unless such a row sits among the newest.
    """
    connection = _connection(scope.using)
    # A non-positive limit still runs the (one-row) query, so that a foreign
    # conversation is refused rather than answered with an empty list.
    window = None if limit is None else max(limit, 1)
    while True:
        rows = select(connection, _read_sql, scope.session_id, window)
        if not rows:
            return []
        _check_owner(scope, rows[0][0])
        if limit is not None and limit <= 0:
            return []
        payloads = [payload for _, payload in rows if payload is not None]
        if window is None or limit is None:
            return serialization.decode_payloads(payloads)
        payloads.reverse()
        items = serialization.decode_payloads(payloads)
        if len(items) >= limit:
            return items[-limit:]
        if len(payloads) < window:
            return items
        window *= 2


def append_items(
    scope: Scope, encoded: list[EncodedItem], title: str, files: FilesByIndex | None = None
) -> None:
    """Store a validated batch after the conversation's last item, atomically; with the
    inline ``files`` its items carried, by position (``store.attachments``)."""
    if files:
        with attachments.deleted_on_failure() as saved:
            _append_items(scope, encoded, title, shortcut=False, files=(files, saved))
        return
    try:
        _append_items(scope, encoded, title, shortcut=True)
    except FirstWrite:
        _append_items(scope, encoded, title, shortcut=False)


def _append_items(
    scope: Scope,
    encoded: list[EncodedItem],
    title: str,
    *,
    shortcut: bool,
    files: tuple[FilesByIndex, list[str]] | None = None,
) -> None:
    connection = _connection(scope.using)
    count = len(encoded)
    with writing(connection, scope.using, shortcut=shortcut) as (cursor, sql):
        clock = read_clock(connection)  # in the transaction: stamps follow the write lock
        locked = _lock(cursor, sql, scope, clock, count_delta=count, title=title)
        if locked is None:
            if sql.qmark:
                raise FirstWrite
            _create(scope, clock.now, title)
            locked = _lock(cursor, sql, scope, clock, count_delta=count, title=title)
            assert locked is not None, "the conversation row was just created"
        _check_owner(scope, locked.owner_id)
        if files is not None:
            session = (locked.pk, scope.session_id, locked.owner_id)
            encoded = attachments.with_stored_files(scope.using, session, encoded, *files)
        _insert_items(cursor, sql, locked.pk, encoded, clock.stamp, connection)


def pop_newest(scope: Scope) -> Any:
    """Remove and return the newest item, or None; exactly once under concurrency."""
    connection = _connection(scope.using)
    with writing(connection, scope.using) as (cursor, sql):
        locked = _lock(cursor, sql, scope, read_clock(connection), count_delta=-1)
        if locked is None:
            return None
        _check_owner(scope, locked.owner_id)
        dropped = 0
        while True:
            cursor.execute(sql.pop, [locked.pk])
            row: Any = cursor.fetchone()
            decoded = [] if row is None else serialization.decode_payloads([row[0]])
            if row is None or decoded:
                break
            # A row that no longer decodes is dropped; keep looking for a real item.
            dropped += 1
        if dropped:  # the lock counted one row out; each dropped row is one more
            cursor.execute(sql.recount, [-dropped, -dropped, locked.pk])
        return decoded[0] if decoded else None


def clear(scope: Scope) -> None:
    """Delete every item; the conversation row (owner, title) stays."""
    connection = _connection(scope.using)
    # Django's transaction, not the SQLite shortcut: files go once it commits.
    with writing(connection, scope.using, shortcut=False) as (cursor, sql):
        locked = _lock(cursor, sql, scope, read_clock(connection), count_delta=None)
        if locked is None:
            return
        _check_owner(scope, locked.owner_id)
        delete_items_of(connection, [locked.pk])


def take_back_last_turn(scope: Scope) -> list[Any] | None:
    """Delete the newest user message and every item after it, in one transaction.

    Returns what was deleted, oldest first (the user message first), or None, changing
    nothing, when the conversation has no user message. This is the SDK's ``pop_item``
    correction pattern (edit, regenerate) as one statement: a crash or a concurrent
    writer can never leave half a turn taken back.
    """
    connection = _connection(scope.using)
    with writing(connection, scope.using) as (cursor, sql):
        locked = _lock(cursor, sql, scope, read_clock(connection), count_delta=0)
        if locked is None:
            return None
        _check_owner(scope, locked.owner_id)
        turn = _last_turn(cursor, sql, locked.pk)
        if turn is None:
            return None
        cursor.execute(sql.delete_from, [locked.pk, turn[0][0]])
        removed = -int(cursor.rowcount)
        cursor.execute(sql.recount, [removed, removed, locked.pk])
    return serialization.decode_payloads([payload for _, payload in turn])


def _last_turn(cursor: Cursor, sql: Statements, session_pk: int) -> list[Any] | None:
    """The rows (id, payload) from the newest user message on, oldest first."""
    window = 32
    while True:
        cursor.execute(sql.newest_items, [session_pk, window])
        rows: list[Any] = cursor.fetchall()
        for index, (_, payload) in enumerate(rows):
            decoded = serialization.decode_payloads([payload])
            if decoded and is_user_message(decoded[0]):
                return rows[index::-1]
        if len(rows) < window:
            return None
        window *= 4


def _lock(
    cursor: Cursor,
    sql: Statements,
    scope: Scope,
    clock: Clock,
    *,
    count_delta: int | None,
    title: str = "",
) -> _Locked | None:
    """Write the conversation row first: it is the lock every mutation queues on.

    ``updated_at`` moves to ``now`` (a second statement) when it is older than
    ``UPDATED_AT_RESOLUTION`` or another conversation of the owner is more recent.
    """
    params: list[Any] = []
    if count_delta is not None and count_delta >= 0:
        params.append(count_delta)
    if title:
        params.append(title)
    params.append(scope.session_id)
    params.append(clock.threshold)
    count_change = "reset" if count_delta is None else "add" if count_delta >= 0 else "pop"
    cursor.execute(sql.lock(count_change, bool(title)), params)
    row: Any = cursor.fetchone()
    if row is None:
        return None
    locked = _Locked(row[0], row[1], bool(row[2]))
    if locked.stale:
        cursor.execute(sql.touch, [clock.stamp, locked.pk])
    return locked


# Rows per INSERT: 8 parameters each stays far below every SQLite build's variable limit.
_INSERT_CHUNK = 500


def _insert_items(
    cursor: Cursor,
    sql: Statements,
    session_pk: int,
    encoded: list[EncodedItem],
    created_at: Any,
    connection: BaseDatabaseWrapper,
) -> None:
    """One multi-row INSERT per chunk. Measured: ``bulk_create`` spent more time building
    model instances and array parameters than the database spent storing the rows.
    On SQLite, then the search index's batch if one is due (``search_batches``)."""
    for start in range(0, len(encoded), _INSERT_CHUNK):
        chunk = encoded[start : start + _INSERT_CHUNK]
        params: list[Any] = []
        for item in chunk:
            params += [session_pk, *item, created_at]  # EncodedItem is in column order
        cursor.execute(sql.insert(len(chunk)), params)
    if encoded and connection.vendor == "sqlite":
        search_batches.after_insert(connection, cursor, int(cursor.lastrowid), qmark=sql.qmark)


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
    sql: Statements, session_id: str, limit: int | None, with_ids: bool = False
) -> tuple[str, list[Any]]:
    if limit is None:
        return sql.read_all, [session_id]
    text = sql.read_newest_with_ids if with_ids else sql.read_newest
    if sql.limit_first:
        return text, [max(limit, 1), session_id]
    return text, [session_id, max(limit, 1)]


def _connection(using: str) -> BaseDatabaseWrapper:
    """The connection for ``using``, replaced first if its last query broke it.

    Consumers and run_sync threads live longer than a request, so Django's own
    per-request cleanup never runs for them; without this, one database restart
    would fail every later operation on that thread.
    """
    connection = connections[using]
    if not connection.in_atomic_block:
        if connection.errors_occurred:
            connection.close_if_unusable_or_obsolete()
        # A database restart must not fail the next operation (store.health).
        replace_if_ended_by_server(connection)
    return connection
