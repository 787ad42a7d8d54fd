"""The parity benchmark's contenders: each backend in the state it is measured in (the
SDK's SQLiteSession on a grown pool or one warm thread, DjangoSession, the guarantee
floor, DjangoSession forced onto its fallback path), and the durability settings each
one's own connection reports."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.backends import DjangoSessionBackend, SDKSQLiteBackend
from benchmarks.sessions import _prepare
from benchmarks.targets import Target


@dataclass
class Contender:
    """One backend in one state, and the sessions it runs each workload on."""

    name: str
    label: str
    target: Target
    make: Callable[[str], Awaitable[Any]]
    items_table: str
    # Entered around each of its blocks (e.g. which executor asyncio.to_thread uses).
    state: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext
    # Runs on another contender's prepared sessions (the same rows), made its own by
    # ``adopt``; None: prepares its own.
    shares: str | None = None
    adopt: Callable[[Any], Any] = lambda session: session
    sessions: dict[str, Any] = field(default_factory=dict)
    durability: dict[str, str] = field(default_factory=dict)


def _django(target: Target, name: str = "django", label: str = "DjangoSession") -> Contender:
    backend = DjangoSessionBackend(target)
    backend.setup()
    return Contender(name, label, target, backend.make, backend.items_table)


@contextlib.contextmanager
def _default_executor(executor: ThreadPoolExecutor) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    previous = getattr(loop, "_default_executor", None)
    loop.set_default_executor(executor)
    try:
        yield
    finally:
        if previous is not None:
            loop.set_default_executor(previous)


def _sdk(target: Target, name: str, label: str, executor: ThreadPoolExecutor) -> Contender:
    backend = SDKSQLiteBackend(target)
    return Contender(
        name,
        label,
        target,
        backend.make,
        backend.items_table,
        state=lambda: _default_executor(executor),
    )


def _grow(executor: ThreadPoolExecutor, threads: int) -> None:
    """Start ``threads`` threads in ``executor``, as a long-lived process's pool has."""
    import threading

    barrier = threading.Barrier(threads)
    for future in [executor.submit(barrier.wait, 10) for _ in range(threads)]:
        future.result()


async def durability(contender: Contender) -> dict[str, str]:
    from django_agent_sessions.store import bridge

    session = next(iter(contender.sessions.values()))
    if contender.name == "floor":
        return await bridge.run(lambda: _pragmas(session.connection()))
    if contender.name.startswith("sdk"):
        with contender.state():
            return await asyncio.to_thread(lambda: _pragmas(session._get_connection()))

    def read_django() -> dict[str, str]:
        from django.db import connection

        if connection.vendor != "sqlite":
            with connection.cursor() as cursor:
                cursor.execute("SHOW synchronous_commit")
                commit = cursor.fetchone()[0]
                cursor.execute("SHOW fsync")
                fsync = cursor.fetchone()[0]
            return {"synchronous_commit": commit, "fsync": fsync}
        connection.ensure_connection()
        mode = connection.settings_dict.get("OPTIONS", {}).get("transaction_mode", "DEFERRED")
        return {**_pragmas(connection.connection), "transaction_mode": mode}

    return await bridge.run(read_django)


_SYNC = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def _pragmas(conn: Any) -> dict[str, str]:
    """The journal mode and ``synchronous`` setting of a sqlite3 connection."""
    return {
        "journal_mode": str(conn.execute("PRAGMA journal_mode").fetchone()[0]),
        "synchronous": _SYNC[int(conn.execute("PRAGMA synchronous").fetchone()[0])],
    }


def build(
    db: str, workdir: Path, *, floor: bool = False, floor_columns: bool = True
) -> tuple[list[Contender], list[str]]:
    """The contenders, their databases created and migrated (before the event loop runs:
    Django refuses to migrate from async code). ``floor``: the guarantee floor first, as
    the reference, then the SDK in both states and DjangoSession (SQLite only)."""
    if db == "sqlite":
        django_file = _prepare("sqlite", "parity-django", workdir)
        sdk_file = _prepare("sqlite", "parity-sdk", workdir)
        pool = ThreadPoolExecutor(max_workers=min(32, (os.cpu_count() or 1) + 4))
        _grow(pool, pool._max_workers)
        warm = ThreadPoolExecutor(max_workers=1)
        django = _django(Target("sqlite", django_file))
        contenders = [
            django,
            # One SQLite file and one set of session objects for both SDK states, driven
            # through either executor.
            _sdk(Target("sqlite", sdk_file), "sdk-pool", "SQLiteSession (pool)", pool),
            _sdk(Target("sqlite", sdk_file), "sdk-warm", "SQLiteSession (1 thread)", warm),
        ]
        contenders[2].shares = "sdk-pool"
        if floor:
            contenders = [_floor(django_file, floor_columns), *contenders[1:], django]
        return contenders, [django_file, sdk_file]
    if floor:
        raise SystemExit("--floor measures SQLite only")
    name = _prepare("postgres", "parity_django", workdir)
    django = _django(Target("postgres", name))
    return [django, _shipped(_django(Target("postgres", name)))], [name]


def _floor(django_file: str, columns: bool) -> Contender:
    """The guarantee floor, on DjangoSession's own file and conversations."""
    import threading

    from benchmarks.guarantee_floor import FloorSession

    local = threading.local()

    def session(session_id: str) -> FloorSession:
        return FloorSession(session_id, django_file, local, columns=columns)

    async def make(session_id: str) -> Any:
        return session(session_id)

    return Contender(
        "floor",
        "guarantee floor" if columns else "guarantee floor (empty browsing columns)",
        Target("sqlite", django_file),
        make,
        DjangoSessionBackend.items_table,
        shares="django",
        adopt=lambda django_session: session(django_session.session_id),
    )


def _shipped(contender: Contender) -> Contender:
    """The same DjangoSession, forced onto the path the fast path falls back to."""

    @contextlib.contextmanager
    def forced() -> Iterator[None]:
        from django_agent_sessions.store import bridge

        with bridge.shipped_path():
            yield

    contender.name, contender.label, contender.state = (
        "django-shipped",
        "DjangoSession (fallback path)",
        forced,
    )
    contender.shares = "django"
    return contender
