"""The synchronous, transactional half of ``DjangoSession``.

Each public function here is one whole operation: ``DjangoSession`` calls exactly one of
them per hop through ``bridge``. Every mutation's first statement is an ``UPDATE`` of the
conversation row. That takes the row lock on PostgreSQL and the write lock on SQLite, so
concurrent writers to one conversation are serialised for the whole transaction: ids are
assigned in commit order, batches never interleave, and a pop claims exactly one item.
The SQL text lives in ``statements``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from django_agent_sessions import items as item_kinds
from django_agent_sessions import serialization
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession
from django_agent_sessions.serialization import EncodedItem
from django_agent_sessions.store.conversations import delete_items_of
from django_agent_sessions.store.statements import Statements, statements


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
    """The newest ``limit`` items (all when None), oldest first, in one query."""
    connection = _connection(scope.using)
    # A non-positive limit still runs the (one-row) query, so that a foreign
    # conversation is refused rather than answered with an empty list.
    sql, params = _read_sql(statements(connection), scope.session_id, limit)
    with connection.cursor() as cursor:
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
        items = item_kinds.drop_orphan_outputs(items)
    return items


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
        sql = statements(connection).pop
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
    cursor.execute(statements(connection).lock(count_change, bool(title)), params)
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
    sql = statements(connection)
    for start in range(0, len(encoded), _INSERT_CHUNK):
        chunk = encoded[start : start + _INSERT_CHUNK]
        params: list[Any] = []
        for item in chunk:
            params += [session_pk, *item, created_at]  # EncodedItem is in column order
        cursor.execute(sql.insert(len(chunk)), params)


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


def _read_sql(sql: Statements, session_id: str, limit: int | None) -> tuple[str, list[Any]]:
    if limit is None:
        return sql.read_all, [session_id]
    if sql.limit_first:
        return sql.read_newest, [max(limit, 1), session_id]
    return sql.read_newest, [session_id, max(limit, 1)]


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
