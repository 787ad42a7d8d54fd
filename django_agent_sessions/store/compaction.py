"""Compaction's operations on stored items: a bounded snapshot and the atomic
replacement of its suffix (automatic compaction), and the atomic replacement of the
whole history (a manual ``run_compaction()``).

The SDK's ``OpenAIResponsesCompactionSession`` reads the newest rows, sends them to the
compaction API (which takes a while), then asks the store to replace them with the
summary. ``replace_suffix`` does that in one transaction that locks the conversation row
first, like every mutation in ``store.items``, and refuses (changing nothing) when the
newest rows are no longer the ones it read, so an item another worker appended during
the request is never lost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django_agent_sessions import serialization
from django_agent_sessions.serialization import EncodedItem
from django_agent_sessions.store import attachments
from django_agent_sessions.store import items as stored
from django_agent_sessions.store.attachments import FilesByIndex
from django_agent_sessions.store.clock import read_clock
from django_agent_sessions.store.conversations import delete_items_of
from django_agent_sessions.store.items import Scope
from django_agent_sessions.store.statements import Statements
from django_agent_sessions.store.transactions import Cursor, select, writing


@dataclass(frozen=True)
class Snapshot:
    """The newest rows of a conversation, for compaction (see ``snapshot``)."""

    row_ids: list[int]
    items: list[Any]
    complete: bool


def snapshot(scope: Scope, limit: int) -> Snapshot:
    """The newest ``limit`` readable rows, oldest first, with their ids.

    ``complete`` says that nothing older exists. A row that does not decode is never
    part of a snapshot: the snapshot starts after the newest such row (and is then not
    complete), so a compaction cannot replace, and so delete, what it could not read.
    One query: ``limit + 1`` rows tell completeness without reading the prefix.
    """
    connection = stored._connection(scope.using)
    rows = select(connection, stored._read_sql, scope.session_id, max(limit, 0) + 1, True)
    if not rows:
        return Snapshot([], [], True)
    stored._check_owner(scope, rows[0][0])
    newest = [(row_id, payload) for _, row_id, payload in rows if row_id is not None]
    complete = len(newest) <= limit
    window = newest[:limit]
    window.reverse()
    row_ids: list[int] = []
    items: list[Any] = []
    for row_id, payload in window:
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
    connection = stored._connection(scope.using)
    with writing(connection, scope.using) as (cursor, sql):
        clock = read_clock(connection)  # in the transaction, as in store.items
        locked = stored._lock(cursor, sql, scope, clock, count_delta=0)
        if locked is None:
            return False
        stored._check_owner(scope, locked.owner_id)
        cursor.execute(sql.newest_ids, [locked.pk, len(expected_ids)])
        if [row[0] for row in reversed(cursor.fetchall())] != expected_ids:
            return False
        removed = 0
        if prune_prefix is not None:
            removed += _prune_prefix(
                cursor, sql, locked.pk, expected_ids[0], prune_prefix, max(prune_batch, 1)
            )
        cursor.execute(sql.delete_from, [locked.pk, expected_ids[0]])
        removed += int(cursor.rowcount)
        stored._insert_items(cursor, sql, locked.pk, encoded, clock.stamp, connection)
        delta = len(encoded) - removed
        cursor.execute(sql.recount, [delta, delta, locked.pk])
    return True


def _prune_prefix(
    cursor: Cursor,
    sql: Statements,
    session_pk: int,
    before_id: int,
    prune: Callable[[Any], bool],
    batch: int,
) -> int:
    removed = 0
    while True:
        cursor.execute(sql.oldest_before, [session_pk, before_id, batch])
        rows = cursor.fetchall()
        expired_end = None
        for row_id, payload in rows:
            decoded = serialization.decode_payloads([payload])
            if not decoded or not prune(decoded[0]):
                break
            expired_end = row_id
        if expired_end is None:
            return removed
        cursor.execute(sql.delete_through, [session_pk, expired_end])
        removed += int(cursor.rowcount)
        if expired_end != rows[-1][0] or len(rows) < batch:
            return removed


def replace_all(scope: Scope, encoded: list[EncodedItem], files: FilesByIndex | None) -> None:
    """Replace every stored item with ``encoded`` (the SDK's manual compaction), in one
    transaction that locks the conversation row first: a reader sees the old history or
    the new one, never the empty one between. The title and owner stay; the old items'
    attachments go with them (their files once it commits), the new items' files are
    stored (deleted again if the transaction fails)."""
    connection = stored._connection(scope.using)
    with (
        attachments.deleted_on_failure() as saved,
        writing(connection, scope.using, shortcut=False) as (cursor, sql),
    ):
        clock = read_clock(connection)
        locked = stored._lock(cursor, sql, scope, clock, count_delta=None)
        if locked is not None:
            stored._check_owner(scope, locked.owner_id)
            delete_items_of(connection, [locked.pk])
            session = (locked.pk, scope.session_id, locked.owner_id)
            if files:
                encoded = attachments.with_stored_files(scope.using, session, encoded, files, saved)
            stored._insert_items(cursor, sql, locked.pk, encoded, clock.stamp, connection)
            cursor.execute(sql.recount, [len(encoded), len(encoded), locked.pk])
            return
    if encoded:  # nothing was stored: the replacement is the first write
        stored.append_items(scope, encoded, "", files)
