"""Where a benchmark runs: one SQLite file or one PostgreSQL database, plus raw access."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Target:
    """``kind`` is ``sqlite`` (``name`` is a file path) or ``postgres`` (a database name)."""

    kind: str
    name: str

    @property
    def placeholder(self) -> str:
        return "?" if self.kind == "sqlite" else "%s"

    def connect(self) -> Any:
        """A plain sync driver connection in autocommit mode."""
        if self.kind == "sqlite":
            conn = sqlite3.connect(self.name, isolation_level=None, timeout=20)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            return conn
        import psycopg

        return psycopg.connect(dbname=self.name, autocommit=True)

    def sqlalchemy_url(self) -> str:
        if self.kind == "sqlite":
            return f"sqlite+aiosqlite:///{self.name}"
        user = os.environ.get("PGUSER", "postgres")
        host = os.environ.get("PGHOST", "127.0.0.1")
        port = os.environ.get("PGPORT", "5432")
        password = os.environ.get("PGPASSWORD", "")
        auth = f"{user}:{password}" if password else user
        return f"postgresql+asyncpg://{auth}@{host}:{port}/{self.name}"


def bulk_copy(target: Target, table: str, template_id: int, count: int, order_column: str) -> None:
    """Append ``count`` copies of row ``template_id`` to ``table`` with plain SQL.

    ``order_column`` is the per-session order key of that backend; copies get increasing
    values of it, so they follow the template in the session's order. This keeps the setup
    of a million-item session at seconds instead of hours of ``add_items``.
    """
    conn = target.connect()
    try:
        columns = [c for c in _columns(conn, target, table) if c != "id"]
        select = [f"t.{c} + g.x" if c == order_column else f"t.{c}" for c in columns]
        if target.kind == "sqlite":
            series = (
                "(WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < ?) "
                "SELECT x FROM s) g"
            )
        else:
            series = "generate_series(1, %s) AS g(x)"
        p = target.placeholder
        conn.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(select)} "
            f"FROM {table} t CROSS JOIN {series} WHERE t.id = {p} ORDER BY g.x",
            (count, template_id),
        )
        if target.kind == "postgres":
            conn.execute(f"ANALYZE {table}")
        else:
            conn.execute("ANALYZE")
    finally:
        conn.close()


def max_id(target: Target, table: str) -> int:
    conn = target.connect()
    try:
        row = conn.execute(f"SELECT MAX(id) FROM {table}").fetchone()
        return int(row[0])
    finally:
        conn.close()


def _columns(conn: Any, target: Target, table: str) -> list[str]:
    if target.kind == "sqlite":
        return [row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()]
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
        "ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [row[0] for row in rows]
