"""The session backends under comparison, behind one small adapter each.

An adapter prepares the schema (``setup``), makes ``Session`` objects (``make``), and
names its items table and per-session order column so that large sessions can be
bulk-loaded with SQL. Imports happen inside the adapters: each benchmark process loads
only its own backend's libraries.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from typing import Any

from benchmarks.targets import Target


class Backend:
    name = ""
    label = ""
    databases: tuple[str, ...] = ("sqlite", "postgres")
    requires: tuple[str, ...] = ()
    min_python = (3, 10)
    items_table = ""
    order_column = "id"
    # Django apps (and settings) this backend needs, when it is Django-based.
    apps: tuple[str, ...] = ()
    thread_sensitive = True

    def __init__(self, target: Target) -> None:
        self.target = target

    def unavailable(self) -> str | None:
        """Why this backend cannot run here, or None."""
        if self.target.kind not in self.databases:
            return f"{self.label} does not support {self.target.kind}"
        if sys.version_info < self.min_python:
            need = ".".join(map(str, self.min_python))
            return f"{self.label} needs Python >= {need} (this is {sys.version.split()[0]})"
        # psycopg: PostgreSQL setup and bulk loading use it for every backend.
        needed = (*self.requires, "psycopg") if self.target.kind == "postgres" else self.requires
        missing = [m for m in needed if importlib.util.find_spec(m) is None]
        if missing:
            return f"{self.label}: not installed here ({', '.join(missing)})"
        return None

    def setup(self, *, create_schema: bool = True) -> None:
        if self.apps:
            os.environ["BENCH_DB"] = self.target.kind
            os.environ["BENCH_DB_NAME"] = self.target.name
            os.environ["BENCH_APPS"] = ",".join(self.apps)
            os.environ["BENCH_THREAD_SENSITIVE"] = "1" if self.thread_sensitive else "0"
            os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
            import django

            django.setup()
            if create_schema:
                from django.core.management import call_command

                call_command("migrate", verbosity=0)

    async def make(self, session_id: str) -> Any:
        raise NotImplementedError

    async def close(self) -> None:
        """Release connections (called once at the end of a process)."""


class DjangoSessionBackend(Backend):
    name, label = "django", "DjangoSession"
    requires = ("django_agent_sessions",)
    apps = ("django_agent_sessions",)
    items_table = "django_agent_sessions_sessionitem"

    async def make(self, session_id: str) -> Any:
        from django_agent_sessions import DjangoSession

        return DjangoSession(session_id)

    async def close(self) -> None:
        from asgiref.sync import sync_to_async
        from django.db import connections

        await sync_to_async(connections.close_all, thread_sensitive=True)()


class DjangoSessionPoolBackend(DjangoSessionBackend):
    name, label = "django-pool", "DjangoSession (THREAD_SENSITIVE=False)"
    thread_sensitive = False


class DjangoSessionPreparedBackend(DjangoSessionBackend):
    """Django configured with psycopg's own defaults: server-side binding, prepared
    statements. Django turns both off by default; the floor has them."""

    name, label = "django-prepared", "DjangoSession (server_side_binding)"
    databases = ("postgres",)

    def setup(self, *, create_schema: bool = True) -> None:
        os.environ["BENCH_PG_SERVER_BINDING"] = "1"
        super().setup(create_schema=create_schema)


class FloorBackend(Backend):
    name, label = "floor", "floor (plain driver + to_thread)"
    apps = ("django_agent_sessions",)  # only for the schema: the same tables
    requires = ("django_agent_sessions",)
    items_table = "django_agent_sessions_sessionitem"

    def __init__(self, target: Target) -> None:
        super().__init__(target)
        self._local = threading.local()

    async def make(self, session_id: str) -> Any:
        from benchmarks.floor import FloorSession

        return FloorSession(session_id, self.target, self._local)


class SDKSQLiteBackend(Backend):
    name, label = "sdk-sqlite", "SDK SQLiteSession"
    databases = ("sqlite",)
    requires = ("agents",)
    items_table = "agent_messages"

    async def make(self, session_id: str) -> Any:
        from agents import SQLiteSession

        if not getattr(SQLiteSession, "_bench_tuned", False):
            # The same durability setting every other SQLite backend here gets. Set on the
            # class (this worker process runs only this backend), not in a subclass:
            # SQLiteSession offers its compaction hook only to instances of exactly itself.
            configure = SQLiteSession._configure_connection

            def tuned(conn: Any) -> None:
                configure(conn)
                conn.execute("PRAGMA synchronous=NORMAL")

            SQLiteSession._configure_connection = staticmethod(tuned)  # type: ignore[method-assign]
            SQLiteSession._bench_tuned = True  # type: ignore[attr-defined]
        return SQLiteSession(session_id, db_path=self.target.name)


class SQLAlchemyBackend(Backend):
    name, label = "sdk-sqlalchemy", "SDK SQLAlchemySession"
    requires = ("sqlalchemy", "aiosqlite", "asyncpg", "greenlet")
    items_table = "agent_messages"
    _engine: Any = None

    def _get_engine(self) -> Any:
        if self._engine is None:
            from sqlalchemy import event
            from sqlalchemy.ext.asyncio import create_async_engine

            # One engine (one pool) for all sessions, as an application would keep it.
            self._engine = create_async_engine(self.target.sqlalchemy_url())
            if self.target.kind == "sqlite":

                @event.listens_for(self._engine.sync_engine, "connect")  # type: ignore[untyped-decorator,misc]
                def _tune(dbapi_connection: Any, _record: Any) -> None:
                    cursor = dbapi_connection.cursor()
                    cursor.execute("PRAGMA synchronous=NORMAL")
                    cursor.execute("PRAGMA busy_timeout=20000")
                    cursor.close()

        return self._engine

    async def make(self, session_id: str) -> Any:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

        return SQLAlchemySession(session_id, engine=self._get_engine(), create_tables=True)

    async def close(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()


class OpenAIDjangoSessionsBackend(Backend):
    name, label = "openai-django-sessions", "openai-django-sessions"
    requires = ("openai_django_sessions",)
    min_python = (3, 12)
    apps = ("openai_django_sessions",)
    items_table = "agent_messages"

    def setup(self, *, create_schema: bool = True) -> None:
        super().setup(create_schema=create_schema)
        if create_schema:
            from openai_django_sessions import DjangoSession

            DjangoSession("schema", create_tables=True)

    async def make(self, session_id: str) -> Any:
        from openai_django_sessions import DjangoSession

        return DjangoSession(session_id)


class AgenticDjangoBackend(Backend):
    name, label = "agentic-django", "agentic-django"
    requires = ("agentic_django",)
    min_python = (3, 12)
    apps = ("agentic_django",)
    items_table = "agentic_django_agentsessionitem"
    order_column = "sequence"

    async def make(self, session_id: str) -> Any:
        from agentic_django.sessions import DatabaseSession
        from asgiref.sync import sync_to_async
        from django.contrib.auth import get_user_model

        def get_or_create() -> Any:
            owner, _ = get_user_model().objects.get_or_create(username="bench")
            return DatabaseSession.get_or_create(session_id, owner)

        return await sync_to_async(get_or_create, thread_sensitive=True)()


BACKENDS: dict[str, type[Backend]] = {
    cls.name: cls
    for cls in (
        DjangoSessionBackend,
        DjangoSessionPoolBackend,
        DjangoSessionPreparedBackend,
        FloorBackend,
        SDKSQLiteBackend,
        SQLAlchemyBackend,
        OpenAIDjangoSessionsBackend,
        AgenticDjangoBackend,
    )
}
