"""How a session operation's statements reach the database: the general path, and the
SQLite shortcut.

The general path is ``transaction.atomic()`` and Django's cursor. On SQLite, where
nothing needs them, the shortcut runs the same statements as ``BEGIN IMMEDIATE`` ...
``COMMIT`` on the driver connection, through sqlite3's own cursor inside Django's
``CursorWrapper`` (so ``execute_wrapper()``, error translation and ``errors_occurred``
still see every statement) with ``?`` placeholders. Measured (benchmarks/parity.py):
atomic()'s bookkeeping and the per-statement placeholder rewrite were about a third of
a write's Python time in the worker thread.

The shortcut is taken only when all of this holds, else the general path runs:

- the connection is SQLite and ``sqlite_shortcut_supported()`` (the Django internals it
  uses exist; ``tests/test_shortcuts.py`` checks each of them);
- no atomic block and autocommit on: no caller's transaction, no savepoint or
  ``on_commit`` hook to honour (inside ``atomic()`` a write joins the caller's
  transaction exactly as before);
- no query logging (``DEBUG``, ``assertNumQueries``, the debug toolbar): they see
  exactly the general path's statements and SQL;
- the driver connection is in Django's autocommit state (``isolation_level`` None, the
  legacy transaction control) with no transaction open;
- ``bridge.shipped_path()`` is not in force.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper

from django_agent_sessions import bridge
from django_agent_sessions.store.statements import Statements, statements

_LEGACY = getattr(sqlite3, "LEGACY_TRANSACTION_CONTROL", -1)


class FirstWrite(Exception):  # a signal to the caller, not an error
    """The shortcut met a conversation that does not exist yet: create it on the
    general path (the ORM's insert opens its own atomic block)."""


def sqlite_shortcut_supported() -> bool:
    """Whether this Django has the SQLite connection internals the shortcut uses."""
    from django.db.backends.sqlite3.base import DatabaseWrapper

    return all(
        callable(getattr(DatabaseWrapper, name, None))
        for name in ("_prepare_cursor", "ensure_connection", "get_autocommit", "is_usable")
    ) and isinstance(getattr(DatabaseWrapper, "queries_logged", None), property)


@functools.cache
def _supported() -> bool:
    return sqlite_shortcut_supported()


def driver(connection: BaseDatabaseWrapper) -> sqlite3.Connection | None:
    """The sqlite3 connection, if the shortcut may use it now; None for the general path."""
    if (
        connection.vendor != "sqlite"
        or connection.queries_logged
        or connection.in_atomic_block
        or not bridge.shortcuts_allowed()
        or not _supported()
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


def driver_cursor(connection: BaseDatabaseWrapper, raw: sqlite3.Connection) -> CursorWrapper:
    """sqlite3's own cursor, wrapped as Django wraps every cursor (what ``cursor()``
    does, minus the SQLite cursor subclass that rewrites placeholders).

    With no ``execute_wrapper()`` installed and ``CursorWrapper`` as Django ships it,
    the wrapper is a ``_TranslatingCursor``: its ``execute`` goes straight to the driver
    inside Django's error translation, without the executor chain built for wrappers
    that are not there (measured: about a third of a statement's Python time).
    """
    with connection.wrap_database_errors:
        cursor = raw.cursor()
    if connection.execute_wrappers or not _cursor_wrapper_is_djangos():
        return connection._prepare_cursor(cursor)  # type: ignore[attr-defined,no-any-return]
    return _TranslatingCursor(cursor, connection)


class _TranslatingCursor(CursorWrapper):
    """A ``CursorWrapper`` whose ``execute`` skips the empty ``execute_wrapper`` chain.

    What ``CursorWrapper._execute`` does besides that chain is kept or does not apply:
    Django's error translation is kept; the broken-transaction check applies only in an
    atomic block, where the shortcut is never taken; the apps-not-ready warning cannot
    fire once a session operation runs.
    """

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.db.wrap_database_errors:
            if params is None:
                return self.cursor.execute(sql)
            return self.cursor.execute(sql, params)


def _cursor_wrapper_is_djangos() -> bool:
    """Whether ``CursorWrapper``'s execute path is Django's own code.

    APM agents (Sentry, New Relic, Datadog, ...) patch these methods to see every
    statement; when one has, statements go through them as on the general path.
    """
    return all(
        getattr(getattr(CursorWrapper, name, None), "__code__", None) is not None
        and getattr(CursorWrapper, name).__code__.co_filename == _DJANGO_CURSOR_FILE
        for name in _EXECUTE_PATH
    )


_EXECUTE_PATH = ("execute", "_execute_with_wrappers", "_execute")
_DJANGO_CURSOR_FILE = inspect.getsourcefile(CursorWrapper) or ""


@contextlib.contextmanager
def reading(connection: BaseDatabaseWrapper) -> Iterator[tuple[CursorWrapper, Statements]]:
    """A cursor for one read, and the SQL to give it."""
    raw = driver(connection)
    if raw is None:
        with connection.cursor() as cursor:
            yield cursor, statements(connection)
        return
    with driver_cursor(connection, raw) as cursor:
        yield cursor, statements(connection, qmark=True)


def select(
    connection: BaseDatabaseWrapper,
    build: Callable[..., tuple[str, list[Any]]],
    *args: Any,
) -> list[Any]:
    """The rows of one read: ``build(statements, *args)`` gives its SQL and parameters.

    On the shortcut the rows are fetched from the driver's cursor inside Django's error
    translation, and the cursor is closed directly: ``CursorWrapper`` would build a new
    error-translating function (``functools.wraps``) for each of those two calls.
    """
    raw = driver(connection)
    if raw is None:
        with connection.cursor() as cursor:
            cursor.execute(*build(statements(connection), *args))
            rows: list[Any] = cursor.fetchall()
            return rows
    cursor = driver_cursor(connection, raw)
    try:
        cursor.execute(*build(statements(connection, qmark=True), *args))
        with connection.wrap_database_errors:
            rows = cursor.cursor.fetchall()
        return rows
    finally:
        cursor.cursor.close()


@contextlib.contextmanager
def writing(
    connection: BaseDatabaseWrapper, using: str, *, shortcut: bool = True
) -> Iterator[tuple[CursorWrapper, Statements]]:
    """One transaction around a mutation, with the cursor and SQL to use in it."""
    raw = driver(connection) if shortcut else None
    if raw is None:
        with transaction.atomic(using=using), connection.cursor() as cursor:
            yield cursor, statements(connection)
        return
    cursor = driver_cursor(connection, raw)
    try:
        # IMMEDIATE whatever the configured transaction_mode: the first statement writes
        # anyway, and taking the write lock up front never fails a transaction midway.
        cursor.execute("BEGIN IMMEDIATE")
        try:
            yield cursor, statements(connection, qmark=True)
            with connection.wrap_database_errors:
                raw.commit()
        except BaseException:
            _roll_back(connection, raw)
            raise
    finally:
        cursor.cursor.close()  # directly: see select()


def fetchone(cursor: CursorWrapper, sql: Statements, text: str, params: list[Any]) -> Any:
    """Execute, then take the one row. On the shortcut the row is read from the driver's
    cursor directly: ``CursorWrapper`` builds an error-translating wrapper for every
    ``fetchone`` it passes on, and sqlite3 has already run a ``RETURNING`` statement to
    its end inside ``execute``, so no error can surface in the fetch."""
    cursor.execute(text, params)
    if sql.qmark:
        return cursor.cursor.fetchone()
    return cursor.fetchone()


def _roll_back(connection: BaseDatabaseWrapper, raw: sqlite3.Connection) -> None:
    try:
        if raw.in_transaction:
            with connection.wrap_database_errors:
                raw.rollback()
    except Exception:
        # As atomic() does: a connection that cannot roll back is dropped.
        connection.close()
