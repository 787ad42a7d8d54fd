"""The floor: DjangoSession's SQL through the plain sync driver, one ``to_thread`` per call.

This is what any async session on a sync driver pays at least: the same statements and
transactions as ``django_agent_sessions.storage`` on the same tables, minus the ORM,
validation and browsing columns. One connection per thread, as Django keeps them.
"""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import datetime, timezone
from typing import Any

from benchmarks.targets import Target

SESSIONS = "django_agent_sessions_agentsession"
ITEMS = "django_agent_sessions_sessionitem"


class FloorSession:
    session_settings = None

    def __init__(self, session_id: str, target: Target, local: threading.local) -> None:
        self.session_id = session_id
        self._target = target
        self._local = local
        self._p = target.placeholder

    # -- the Session protocol ---------------------------------------------------------
    async def get_items(self, limit: int | None = None) -> list[Any]:
        return await asyncio.to_thread(self._get_items, limit)

    async def add_items(self, items: list[Any]) -> None:
        if items:
            await asyncio.to_thread(self._add_items, items)

    async def pop_item(self) -> Any:
        return await asyncio.to_thread(self._pop_item)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self._clear)

    # -- sync halves --------------------------------------------------------------------
    def _conn(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._target.connect()
        return conn

    def _now(self) -> Any:
        now = datetime.now(timezone.utc)
        return now.replace(tzinfo=None).isoformat(sep=" ") if self._target.kind == "sqlite" else now

    def _get_items(self, limit: int | None) -> list[Any]:
        p = self._p
        if self._target.kind == "postgres":  # the same statement as storage.read_items
            order = "ASC" if limit is None else "DESC"
            window = "" if limit is None else f" LIMIT {p}"
            sql = (
                f"SELECT s.owner_id, i.payload FROM {SESSIONS} s LEFT JOIN LATERAL ("
                f"SELECT id, payload FROM {ITEMS} WHERE session_id = s.id "
                f"ORDER BY id {order}{window}) i ON TRUE WHERE s.session_id = {p} "
                f"ORDER BY i.id {order}"
            )
            params: tuple[Any, ...] = (
                (self.session_id,) if limit is None else (limit, self.session_id)
            )
        else:
            sql = (
                f"SELECT s.owner_id, i.payload FROM {SESSIONS} s LEFT JOIN {ITEMS} i "
                f"ON i.session_id = s.id WHERE s.session_id = {p} "
            )
            if limit is None:
                sql += "ORDER BY i.id ASC"
                params = (self.session_id,)
            else:
                sql += f"ORDER BY i.id DESC LIMIT {p}"
                params = (self.session_id, limit)
        rows = self._conn().execute(sql, params).fetchall()
        if limit is not None:
            rows.reverse()
        return [json.loads(payload) for _, payload in rows if payload is not None]

    def _begin(self, conn: Any) -> None:
        conn.execute("BEGIN IMMEDIATE" if self._target.kind == "sqlite" else "BEGIN")

    def _lock(self, conn: Any, now: Any, delta: int) -> Any:
        p = self._p
        return conn.execute(
            f"UPDATE {SESSIONS} SET updated_at = {p}, item_count = item_count + {p} "
            f"WHERE session_id = {p} RETURNING id",
            (now, delta, self.session_id),
        ).fetchone()

    def _add_items(self, items: list[Any]) -> None:
        p = self._p
        payloads = [json.dumps(i, ensure_ascii=False, separators=(",", ":")) for i in items]
        conn, now = self._conn(), self._now()
        self._begin(conn)
        try:
            row = self._lock(conn, now, len(items))
            if row is None:
                conn.execute(
                    f"INSERT INTO {SESSIONS} (session_id, owner_id, title, metadata, item_count, "
                    f"created_at, updated_at) VALUES ({p}, NULL, '', '{{}}', 0, {p}, {p}) "
                    "ON CONFLICT (session_id) DO NOTHING",
                    (self.session_id, now, now),
                )
                row = self._lock(conn, now, len(items))
            values = ", ".join([f"({p}, {p}, {p}, {p}, '', '', {p})"] * len(items))
            params: list[Any] = []
            for item, payload in zip(items, payloads, strict=True):
                params += [row[0], payload, item.get("type", "message"), item.get("role", ""), now]
            conn.execute(
                f"INSERT INTO {ITEMS} (session_id, payload, item_type, role, call_id, preview, "
                f"created_at) VALUES {values}",
                params,
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _pop_item(self) -> Any:
        p = self._p
        conn = self._conn()
        self._begin(conn)
        try:
            row = self._lock(conn, self._now(), 0)
            popped = None
            if row is not None:
                popped = conn.execute(
                    f"DELETE FROM {ITEMS} WHERE id = (SELECT id FROM {ITEMS} "
                    f"WHERE session_id = {p} ORDER BY id DESC LIMIT 1) RETURNING payload",
                    (row[0],),
                ).fetchone()
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return None if popped is None else json.loads(popped[0])

    def _clear(self) -> None:
        p = self._p
        conn = self._conn()
        self._begin(conn)
        row = self._lock(conn, self._now(), 0)
        if row is not None:
            conn.execute(f"DELETE FROM {ITEMS} WHERE session_id = {p}", (row[0],))
        conn.execute("COMMIT")
