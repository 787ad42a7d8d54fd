"""How a session operation's statements reach the database: the general path, and the
SQLite shortcut.

The general path is ``transaction.atomic()`` and Django's cursor. On SQLite, where
nothing needs them, the shortcut runs the same statements as ``BEGIN IMMEDIATE`` ...
``COMMIT`` on the driver connection, with ``?`` placeholders, inside one Django error
translation (``wrap_database_errors``: Django's exceptions and ``errors_occurred``, as
on the general path). The statements go to sqlite3's own cursor, or through Django's
``CursorWrapper`` whenever something watches them (an ``execute_wrapper()``, an APM
agent's patched methods). Measured (benchmarks/parity.py): atomic()'s bookkeeping, the
per-statement placeholder rewrite and per-statement wrappers were about two fifths of
a write's Python time in the worker thread.

The shortcut is taken only when all of this holds, else the general path runs:

- the connection is SQLite and ``sqlite_shortcut_supported()`` (the Django internals it
  uses exist; ``tests/test_shortcuts_sqlite.py`` checks each of them);
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
from typing import Any, Protocol

from django.db import DatabaseError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper

from django_agent_sessions.store import bridge
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


class Cursor(Protocol):
    """What the store's functions use of a cursor: Django's ``CursorWrapper`` on the
    general path, sqlite3's own cursor on the shortcut."""

    @property
    def rowcount(self) -> int: ...

    @property
    def lastrowid(self) -> Any: ...

    def execute(self, sql: str, params: Any = ..., /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def close(self) -> Any: ...


def driver_cursor(connection: BaseDatabaseWrapper, raw: sqlite3.Connection) -> Cursor:
    """A cursor on the driver connection, for use inside ``connection.wrap_database_errors``.

    With no ``execute_wrapper()`` installed and ``CursorWrapper`` as Django ships it, that
    is sqlite3's own cursor: what ``CursorWrapper`` would add is Django's error
    translation, which the caller's one ``wrap_database_errors`` block gives the whole
    operation (measured: per-statement wrappers and translation were a sixth of a
    write's time in the worker thread). Otherwise it is the wrapped cursor Django's own
    ``cursor()`` builds, so wrappers and patched methods see every statement.

    sqlite3's own cursor is kept on the connection and reused by the next operation on
    it (``release`` closes it only after a failure): making and closing a cursor per
    operation was 2-4% of a whole operation in the parity benchmark (``--floor``). Every
    statement the store runs on it is read to its end (``fetchall``, or ``fetchone`` of a
    statement with at most one row), so a kept cursor holds no statement in progress.
    """
    if connection.execute_wrappers or not _cursor_wrapper_is_djangos():
        return connection._prepare_cursor(raw.cursor())  # type: ignore[attr-defined,no-any-return]
    kept: tuple[sqlite3.Connection, sqlite3.Cursor] | None = getattr(connection, _KEPT, None)
    if kept is not None and kept[0] is raw:  # the same driver connection, not a reopened one
        return kept[1]
    cursor = raw.cursor()
    setattr(connection, _KEPT, (raw, cursor))
    return cursor


_KEPT = "_agent_sessions_cursor"


def release(connection: BaseDatabaseWrapper, cursor: Cursor, *, failed: bool) -> None:
    """After an operation. sqlite3's own cursor is the kept one: it stays for the next
    operation unless this one failed (it may have left a statement in progress). Django's
    wrapped cursor is made per operation and always closed."""
    if type(cursor) is sqlite3.Cursor:
        if not failed:
            return
        with contextlib.suppress(AttributeError):  # (a failure path: cost does not matter)
            delattr(connection, _KEPT)  # not __dict__: django.db.connection is a proxy
    _close(cursor)


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


def select(
    connection: BaseDatabaseWrapper,
    build: Callable[..., tuple[str, list[Any]]],
    *args: Any,
) -> list[Any]:
    """The rows of one read: ``build(statements, *args)`` gives its SQL and parameters.

    Plain code, not a generator-based context manager: it runs on every ``get_items``,
    and that machinery (with ``contextlib.suppress``) cost about 5% of a whole read in
    the parity benchmark (``--floor``).
    """
    raw = driver(connection)
    if raw is None:
        with connection.cursor() as cursor:
            cursor.execute(*build(statements(connection), *args))
            rows: list[Any] = cursor.fetchall()
            return rows
    with connection.wrap_database_errors:
        cursor = driver_cursor(connection, raw)
        try:
            cursor.execute(*build(statements(connection, qmark=True), *args))
            rows = cursor.fetchall()
        except BaseException:
            release(connection, cursor, failed=True)
            raise
        release(connection, cursor, failed=False)
        return rows


def writing(
    connection: BaseDatabaseWrapper, using: str, *, shortcut: bool = True
) -> contextlib.AbstractContextManager[tuple[Cursor, Statements]]:
    """One transaction around a mutation, with the cursor and SQL to use in it."""
    raw = driver(connection) if shortcut else None
    if raw is None:
        return _general_transaction(connection, using)
    return _ShortcutTransaction(connection, raw)


@contextlib.contextmanager
def _general_transaction(
    connection: BaseDatabaseWrapper, using: str
) -> Iterator[tuple[Cursor, Statements]]:
    with transaction.atomic(using=using), connection.cursor() as cursor:
        yield cursor, statements(connection)


class _ShortcutTransaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` on the driver connection, inside one Django error
    translation (see ``driver_cursor``): a database error leaves it as Django's exception,
    after the rollback.

    A class, not a generator-based context manager: it runs on every write, and the
    generator's machinery was a measurable part of a write's Python (see ``select``).
    IMMEDIATE whatever the configured transaction_mode: the first statement writes
    anyway, and taking the write lock up front never fails a transaction midway.
    """

    __slots__ = ("_connection", "_cursor", "_raw")

    def __init__(self, connection: BaseDatabaseWrapper, raw: sqlite3.Connection) -> None:
        self._connection, self._raw = connection, raw

    def __enter__(self) -> tuple[Cursor, Statements]:
        connection = self._connection
        try:
            cursor = self._cursor = driver_cursor(connection, self._raw)
        except BaseException as error:
            _translate(connection, error)
            raise
        try:
            cursor.execute("BEGIN IMMEDIATE")
        except BaseException as error:
            release(connection, cursor, failed=True)
            _translate(connection, error)
            raise
        return cursor, statements(connection, qmark=True)

    def __exit__(self, kind: Any, error: BaseException | None, traceback: Any) -> None:
        connection, raw = self._connection, self._raw
        failure = error
        if failure is None:
            try:
                raw.commit()
            except BaseException as commit_error:
                failure = commit_error
        if failure is not None:
            _roll_back(connection, raw)
        release(connection, self._cursor, failed=failure is not None)
        if failure is not None:
            _translate(connection, failure)
            if failure is not error:
                raise failure


def _translate(connection: BaseDatabaseWrapper, error: BaseException) -> None:
    """As ``wrap_database_errors``: raise Django's exception for a driver error."""
    connection.wrap_database_errors.__exit__(type(error), error, error.__traceback__)


def _close(cursor: Cursor) -> None:
    # As CursorWrapper.__exit__ does: a cursor of a connection already closed (a failed
    # rollback closes it) cannot be closed, and that must not hide the error in flight.
    # Not contextlib.suppress: one object fewer per operation on the hot path.
    try:  # noqa: SIM105
        cursor.close()
    except (sqlite3.Error, DatabaseError):
        pass


def _roll_back(connection: BaseDatabaseWrapper, raw: sqlite3.Connection) -> None:
    try:
        if raw.in_transaction:
            raw.rollback()
    except Exception:
        # As atomic() does: a connection that cannot roll back is dropped.
        connection.close()
