"""The stores the ported SDK tests construct, as ``DjangoSession``.

The SDK's session tests build ``SQLiteSession(session_id, db_path, ...)`` and its
in-memory ``SimpleListSession(session_id, history)``. Here both names are
``DjangoSession`` subclasses that keep those constructor signatures and add nothing to
the session's behaviour: every ``get_items``/``add_items``/``pop_item``/``clear_session``
call, and the compaction hook, is ``DjangoSession``'s own.

What the constructors emulate is *where* the SDK's stores live: each SQLite file (and
each ``:memory:`` or list session instance) is its own database, so two of them with
the same ``session_id`` are two conversations. Here all of them share the test
database, so the stored conversation id is prefixed with a key of that database
(``session_id`` itself stays what the test passed, as the Runner and the assertions
see it).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import sqlite3
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import django.db.utils
from agents.items import TResponseInputItem
from asgiref.sync import sync_to_async
from django.db import connections

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession, SessionItem


def _database_key(db_path: str | Path | None) -> str:
    if db_path is None or str(db_path) == ":memory:":
        return uuid.uuid4().hex[:12]
    resolved = str(Path(db_path).expanduser().resolve())
    return hashlib.sha256(resolved.encode()).hexdigest()[:12]


class _NamespacedSession(DjangoSession):
    _database: str

    def _bind(self, db_path: str | Path | None) -> None:
        self._database = _database_key(db_path)

    @property
    def stored_session_id(self) -> str:
        return f"{self._database}:{self.session_id}"

    @property
    def _scope(self) -> Any:
        scope = super()._scope
        return type(scope)(self.stored_session_id, scope.owner_id, scope.using)


class SQLiteSession(_NamespacedSession):
    """``DjangoSession`` under the SDK ``SQLiteSession``'s constructor."""

    def __init__(
        self,
        session_id: str,
        db_path: str | Path = ":memory:",
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: Any = None,
    ) -> None:
        super().__init__(session_id, session_settings=session_settings)
        self.db_path = db_path
        self._bind(db_path)

    def close(self) -> None:
        """``SQLiteSession.close``: DjangoSession holds no connection of its own."""


class SimpleListSession(_NamespacedSession):
    """``DjangoSession`` under the SDK test suite's in-memory list session's constructor.

    The SDK's tests use their list session as *a store without the compaction hook*
    (``_get_compaction_snapshot``): its compaction assertions are those of the SDK's
    generic whole-history path. Overriding the four methods (to seed ``history``)
    turns DjangoSession's hook off, so this is DjangoSession on that same path.
    """

    def __init__(
        self,
        session_id: str = "test",
        history: list[TResponseInputItem] | None = None,
    ) -> None:
        super().__init__(session_id)
        self._bind(None)
        self._ignore_ids_for_matching = False
        self._history = list(history) if history else []

    @property
    def _items(self) -> list[TResponseInputItem]:
        """The stored items, read now (the SDK's list session exposes its list here).

        Tests read it synchronously from the event loop, so the read runs on a thread
        of its own, with its own connection.
        """

        def read() -> list[TResponseInputItem]:
            try:
                return [json.loads(payload) for payload in _raw_payloads(self)]
            finally:
                connections.close_all()

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(read).result(timeout=30)

    async def _seed(self) -> None:
        if self._history:
            history, self._history = self._history, []
            await DjangoSession.add_items(self, history)

    async def get_items(self, limit: int | None = None, **kwargs: Any) -> Any:
        await self._seed()
        return await super().get_items(limit, **kwargs)

    async def add_items(self, items: list[TResponseInputItem], **kwargs: Any) -> None:
        await self._seed()
        await super().add_items(items, **kwargs)

    async def pop_item(self, **kwargs: Any) -> Any:
        await self._seed()
        return await super().pop_item(**kwargs)

    async def clear_session(self, **kwargs: Any) -> None:
        await self._seed()
        await super().clear_session(**kwargs)


class CountingSession(SimpleListSession):
    """Counts ``pop_item`` calls (for rewind tests)."""

    def __init__(
        self, session_id: str = "test", history: list[TResponseInputItem] | None = None
    ) -> None:
        super().__init__(session_id=session_id, history=history)
        self.pop_calls = 0

    async def pop_item(self, **kwargs: Any) -> Any:
        self.pop_calls += 1
        return await super().pop_item(**kwargs)


class IdStrippingSession(CountingSession):
    """Strips item ids on add, like hosted stores that reassign them."""

    def __init__(
        self, session_id: str = "test", history: list[TResponseInputItem] | None = None
    ) -> None:
        super().__init__(session_id=session_id, history=history)
        self._ignore_ids_for_matching = True

    async def add_items(self, items: list[TResponseInputItem], **kwargs: Any) -> None:
        sanitized: list[TResponseInputItem] = []
        for item in items:
            if isinstance(item, dict):
                clean = dict(item)
                clean.pop("id", None)
                sanitized.append(cast(TResponseInputItem, clean))
            else:
                sanitized.append(item)
        await super().add_items(sanitized, **kwargs)


# Raw row access, for the tests that write a corrupt row or inspect storage directly
# (the SDK's versions open the SQLite file themselves).


def _session_pk(session: _NamespacedSession) -> int | None:
    return (
        AgentSession.objects.using(session.using)
        .filter(session_id=session.stored_session_id)
        .values_list("pk", flat=True)
        .first()
    )


def _insert_raw_payload(session: _NamespacedSession, payload: str) -> None:
    pk = _session_pk(session)
    if pk is None:
        AgentSession.objects.using(session.using).create(session_id=session.stored_session_id)
        pk = _session_pk(session)
    SessionItem.objects.using(session.using).create(session_id=pk, payload=payload)


async def insert_raw_payload(session: Any, payload: str) -> None:
    """Append a stored row whose payload is ``payload`` verbatim (e.g. not JSON)."""
    await sync_to_async(_insert_raw_payload)(session, payload)


def _raw_payloads(session: _NamespacedSession) -> list[str]:
    return list(
        SessionItem.objects.using(session.using)
        .filter(session__session_id=session.stored_session_id)
        .order_by("id")
        .values_list("payload", flat=True)
    )


async def raw_payloads(session: Any) -> list[str]:
    """Every stored payload of the conversation, oldest first, undecoded."""
    return await sync_to_async(_raw_payloads)(session)


def vendor(session: Any) -> str:
    return str(connections[session.using].vendor)


# Failure injection in DjangoSession's INSERT (the SDK's tests put a SQLite trigger or a
# patched SQLiteSession._insert_items there). The hooks run inside the write's
# transaction, on its thread, with the batch's JSON payloads; conftest.py installs the
# wrapper for each test and removes every hook after it.

insert_hooks: list[Callable[[list[str]], None]] = []

# What a trigger's error reaches the caller as: SQLiteSession raises the driver's
# exception; Django raises its own translation of it when the driver raised it inside
# Django's error handling (DjangoSession's SQLite writes run wholly inside it).
INSERT_FAILURE = (sqlite3.IntegrityError, django.db.utils.IntegrityError)


def reject_inserts(match: Callable[[str], bool]) -> None:
    """Every later INSERT holding a payload ``match`` accepts fails, like a trigger."""

    def reject(payloads: list[str]) -> None:
        if any(match(payload) for payload in payloads):
            raise sqlite3.IntegrityError("synthetic insert failure")

    insert_hooks.append(reject)


def gate_inserts(gate: Callable[[list[str]], None]) -> None:
    """Call ``gate`` before each INSERT (it may block the write's thread)."""
    insert_hooks.append(gate)


def hooked_insert(original: Callable[..., Any]) -> Callable[..., Any]:
    def insert(cursor: Any, sql: Any, session_pk: int, encoded: Any, *rest: Any) -> Any:
        for hook in list(insert_hooks):
            hook([item.payload for item in encoded])
        return original(cursor, sql, session_pk, encoded, *rest)

    return insert


def pause_after_commit(
    monkeypatch: Any, committed: threading.Event, allow_return: threading.Event, outcome: str
) -> None:
    """The first pop or clear commits, then pauses until ``allow_return``; with
    ``outcome == "error"`` its acknowledgement then fails (the SDK's tests pause and
    fail a sqlite3 connection's ``commit()`` the same way)."""
    from django_agent_sessions.store import items as storage

    state = {"pause": True}

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def operation(*args: Any) -> Any:
            result = original(*args)  # its transaction has committed when it returns
            if state["pause"]:
                state["pause"] = False
                committed.set()
                assert allow_return.wait(timeout=10)
                if outcome == "error":
                    raise RuntimeError("commit acknowledgement failed")
            return result

        return operation

    monkeypatch.setattr(storage, "pop_newest", wrap(storage.pop_newest))
    monkeypatch.setattr(storage, "clear", wrap(storage.clear))
