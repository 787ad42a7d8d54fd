"""Keeping long-lived connections usable: was a PostgreSQL connection ended by the server?

Consumers and sync threads keep their connections for as long as the process lives, so a
server restart (or ``pg_terminate_backend``, or an idle timeout) leaves them holding a
dead connection. Django's answer is ``CONN_HEALTH_CHECKS``: one ``SELECT 1`` round trip
before the first query of each request. Every session operation is what a request is to
Django, so that was one extra round trip per operation.

A server that ends a connection says so on the socket: it sends its error and closes,
and the client's socket becomes readable. Between two operations a healthy connection
has nothing to read (a query's whole answer is read with the query). So one ``poll()``
with no timeout (a system call of about a microsecond) tells whether anything came:
if nothing did, the connection is as healthy as ``SELECT 1`` would find it; if something
did, Django's own ``is_usable()`` decides, and a connection that fails it is closed, so
the operation reconnects instead of failing. That holds whatever ``CONN_HEALTH_CHECKS``
says. A host that vanishes without closing its sockets is not detected, by this or by
``SELECT 1`` (which would wait for the network's timeout either way).
"""

from __future__ import annotations

import select
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

_T = TypeVar("_T")
_P = ParamSpec("_P")

# poll(), not select(): a worker holding a thousand websockets has descriptors above
# select()'s limit of 1024. Windows has no poll(); there Django's own check stays.
_POLL = getattr(select, "poll", None)


def with_fresh_connections(function: Callable[_P, _T]) -> Callable[_P, _T]:
    """Replace stale or broken database connections around ``function``.

    For the sync functions of long-lived async callers (websocket consumers and runs
    live longer than any request, so Django's per-request connection cleanup never runs
    for them): a connection older than ``CONN_MAX_AGE``, broken by an error or ended by
    the server is closed before the function and after it, as
    ``channels.db.database_sync_to_async`` does, with the socket poll in place of
    ``SELECT 1``.
    """

    @wraps(function)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        refresh_connections()
        try:
            return function(*args, **kwargs)
        finally:
            refresh_connections()

    return wrapper


def replace_if_ended_by_server(connection: BaseDatabaseWrapper) -> None:
    """Before a session operation: close the connection if the server ended it.

    For PostgreSQL; any other vendor keeps Django's ``CONN_HEALTH_CHECKS`` check, asked
    for once per operation.
    """
    if _probes(connection):
        _replace_if_ended(connection)
    else:
        connection.health_check_done = False  # type: ignore[attr-defined]  # not in the stubs


def refresh_connections() -> None:
    """Django's ``close_old_connections()``, with the socket check standing in for
    ``SELECT 1`` on PostgreSQL: connections past ``CONN_MAX_AGE``, broken by an error
    or ended by the server are closed, and the next query opens a new one."""
    for connection in connections.all(initialized_only=True):
        connection.close_if_unusable_or_obsolete()
        if _probes(connection):
            _replace_if_ended(connection)
            connection.health_check_done = True  # type: ignore[attr-defined]  # done: the probe


def _probes(connection: BaseDatabaseWrapper) -> bool:
    return connection.vendor == "postgresql" and _POLL is not None


def _replace_if_ended(connection: BaseDatabaseWrapper) -> None:
    raw = connection.connection
    if raw is not None and _has_something_to_read(raw) and not connection.is_usable():
        connection.close()


def _has_something_to_read(raw: object) -> bool:
    try:
        descriptor = raw.fileno()  # type: ignore[attr-defined]  # psycopg's connection
    except Exception:  # psycopg raises when the connection is already closed
        return True
    poller = _POLL()  # type: ignore[misc]  # None is ruled out by _probes()
    poller.register(descriptor, select.POLLIN)
    return bool(poller.poll(0))
