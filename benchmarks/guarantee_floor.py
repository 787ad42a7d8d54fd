"""The guarantee floor on SQLite: everything ``DjangoSession`` promises, at the least Python.

``python -m benchmarks.parity --floor`` measures this session against the SDK's
``SQLiteSession`` and against ``DjangoSession``, interleaved. It answers two questions
the parity table alone cannot:

- Is ``SQLiteSession``'s speed reachable at all with ``DjangoSession``'s guarantees? This
  session keeps every one that costs time per operation: each item validated and its
  browsing columns filled before anything is written (``serialization.encode_items``),
  a write that survives its caller's cancellation (``bridge.run_to_completion``, the
  same hop ``DjangoSession`` takes), one ``BEGIN IMMEDIATE`` transaction per mutation,
  the conversation row locked and its owner checked, ``item_count``, the title and
  ``updated_at`` kept, items inserted with their browsing columns, exactly-once pops.
  If it is slower than ``SQLiteSession``, so is any implementation that keeps them.
- How much do Django's layers cost? It runs the very SQL of ``DjangoSession``'s SQLite
  shortcut (``store.statements``, with ``?`` placeholders) on the same tables and rows,
  but on a bare ``sqlite3`` connection and cursor kept per thread: no connection lookup,
  no health or state checks, no error translation, no ``execute_wrapper()`` support, no
  fallback for a caller's transaction. Those are what ``DjangoSession`` adds on top.

With ``columns=False`` (``--floor-columns empty``) it writes the items' JSON with empty
browsing columns (and no title): validation and encoding stay, the classification of each
item for the admin (``item_views.describe`` and the preview) goes. That measures what the
browsing columns cost a write, the one part of the work ``SQLiteSession`` has no
counterpart for.

It is a measuring instrument, not a second implementation: no ownership by users (it
passes ``owner_id`` None, as trusted code does), and a conversation it has not seen is
created the way ``DjangoSession`` creates it.
"""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone
from typing import Any

from django_agent_sessions import conf, serialization
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.session import _title_from
from django_agent_sessions.store import bridge
from django_agent_sessions.store.clock import UPDATED_AT_RESOLUTION
from django_agent_sessions.store.statements import Statements

SESSIONS = f'"{AgentSession._meta.db_table}"'
SQL = Statements("sqlite", SESSIONS, f'"{SessionItem._meta.db_table}"', qmark=True)
CREATE = (
    f"INSERT OR IGNORE INTO {SESSIONS} (session_id, title, metadata, item_count, "
    "created_at, updated_at) VALUES (?, ?, '{}', 0, ?, ?)"
)
MAX_DEPTH: int = conf.DEFAULTS["MAX_ITEM_DEPTH"]


class FloorSession:
    """One conversation of the guarantee floor (SQLite only)."""

    session_settings = None

    def __init__(
        self, session_id: str, path: str, local: threading.local, *, columns: bool = True
    ) -> None:
        # ``local``: one connection per thread, shared by every session of one database.
        self.session_id = session_id
        self.columns = columns
        self.owner_id: Any = None  # trusted code, as the benchmark's DjangoSession
        self._path = path
        self._local = local

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return await bridge.run(self._read, limit)

    async def add_items(self, items: list[Any]) -> None:
        if not items:
            return
        if not self.columns:
            await bridge.run_to_completion(self._append, _json_only(items), "")
            return
        encoded = serialization.encode_items(items, max_bytes=None, max_depth=MAX_DEPTH)
        await bridge.run_to_completion(self._append, encoded, _title_from(encoded))

    async def pop_item(self) -> Any:
        return await bridge.run_to_completion(self._pop)

    async def clear_session(self) -> None:
        raise NotImplementedError("the floor measures single operations only")

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (for reading its settings back)."""
        return self._cursor()[0]

    def close(self) -> None:
        """Close this thread's connection, if it has one."""
        pair = self._local.__dict__.pop("pair", None)
        if pair is not None:
            pair[0].close()

    # -- the sync thread ------------------------------------------------------------------

    def _cursor(self) -> tuple[sqlite3.Connection, sqlite3.Cursor]:
        try:
            return self._local.pair  # type: ignore[no-any-return]
        except AttributeError:
            connection = sqlite3.connect(self._path, isolation_level=None)
            for pragma in ("foreign_keys = ON", "journal_mode = WAL", "synchronous = NORMAL"):
                connection.execute(f"PRAGMA {pragma}")
            self._local.pair = connection, connection.cursor()
            return self._local.pair  # type: ignore[no-any-return]

    def _read(self, limit: int | None) -> list[Any]:
        _, cursor = self._cursor()
        if limit is None:
            cursor.execute(SQL.read_all, (self.session_id,))
            return serialization.decode_payloads(p for _, p in cursor.fetchall() if p is not None)
        cursor.execute(SQL.read_newest, (self.session_id, max(limit, 1)))
        payloads = [p for _, p in cursor.fetchall() if p is not None]
        payloads.reverse()
        return serialization.decode_payloads(payloads)

    def _append(self, encoded: list[serialization.EncodedItem], title: str) -> None:
        connection, cursor = self._cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            stamp, threshold = _texts()
            count = [len(encoded), title] if title else [len(encoded)]
            locked = self._lock(cursor, "add", count, threshold, bool(title))
            if locked is None:
                cursor.execute(CREATE, (self.session_id, title, stamp, stamp))
                locked = self._lock(cursor, "add", [len(encoded)], threshold, False)
            assert locked is not None, "the row inserted just now, in this transaction"
            pk, stale = locked
            if stale:
                cursor.execute(SQL.touch, (stamp, pk))
            params: list[Any] = []
            for item in encoded:
                params += [pk, *item, stamp]
            cursor.execute(SQL.insert(len(encoded)), params)
            connection.commit()
        except BaseException:
            connection.rollback()
            raise

    def _pop(self) -> Any:
        connection, cursor = self._cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            stamp, threshold = _texts()
            locked = self._lock(cursor, "pop", [], threshold, False)
            if locked is None:
                connection.commit()
                return None
            pk, stale = locked
            if stale:
                cursor.execute(SQL.touch, (stamp, pk))
            while True:
                cursor.execute(SQL.pop, (pk,))
                row = cursor.fetchone()
                if row is None:
                    connection.commit()
                    return None
                decoded = serialization.decode_payloads([row[0]])
                if decoded:
                    connection.commit()
                    return decoded[0]
        except BaseException:
            connection.rollback()
            raise

    def _lock(
        self, cursor: sqlite3.Cursor, change: str, params: list[Any], threshold: str, title: bool
    ) -> tuple[int, bool] | None:
        cursor.execute(SQL.lock(change, title), [*params, self.session_id, threshold])
        row = cursor.fetchone()
        if row is None:
            return None
        if self.owner_id is not None and row[1] != self.owner_id:
            raise PermissionError("This conversation belongs to another user.")
        return row[0], bool(row[2])


def _json_only(items: list[Any]) -> list[serialization.EncodedItem]:
    """Each item validated and encoded as ``encode_items`` does, its browsing columns empty."""
    encoded = []
    for index, item in enumerate(items):
        serialization.check_json_value(item, where=f"item {index}", max_depth=MAX_DEPTH)
        encoded.append(serialization.EncodedItem(serialization.dumps(item), "", "", "", ""))
    return encoded


def _texts() -> tuple[str, str]:
    """``store.clock``'s stamp and threshold: naive UTC text, as Django stores it."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    return str(now), str(now - UPDATED_AT_RESOLUTION)
