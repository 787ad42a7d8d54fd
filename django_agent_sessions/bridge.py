"""The one bridge from async code to the sync, transactional database functions.

Every database operation of the app (``DjangoSession``'s and the websocket layer's) is
one hop into the sync world, on the thread Django's own async ORM would use
(``sync_to_async``, thread-sensitive by default):

- ``run(function, *args)``: one hop; returns the function's result.
- ``run_to_completion(function, *args)``: the same for a write, and the write's real
  outcome survives the caller's cancellation. A plain ``sync_to_async`` call that is
  cancelled either commits after its caller was told "cancelled" or, if still queued,
  is dropped. A write made this way always runs exactly once and has finished by the
  time the cancellation reaches its caller, so "cancelled" never hides a commit still
  to come and a completed ``add_items`` is never silently lost (the SDK's own backends
  do the same).
- ``with_fresh_connections``: a decorator for the sync function of a long-lived caller
  (websocket consumers and runs live longer than any request, so Django's per-request
  connection cleanup never runs for them): stale or broken connections are replaced
  before and after it, as ``channels.db.database_sync_to_async`` does.

Measured on SQLite: wrapping each write in an extra task that is waited on (the simple
way to get that guarantee) cost about 15 microseconds per write; the hand-off below costs
nothing until a cancellation actually arrives.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable
from functools import cache, wraps
from typing import Any, Generic, ParamSpec, TypeVar

from asgiref.sync import SyncToAsync
from django.db import close_old_connections

from django_agent_sessions.conf import app_settings

_T = TypeVar("_T")
_P = ParamSpec("_P")


async def run(function: Callable[..., _T], *args: Any) -> _T:
    """Run ``function(*args)`` on the sync thread and return its result."""
    result: _T = await _caller(app_settings.THREAD_SENSITIVE)(function, *args)
    return result


async def run_to_completion(function: Callable[..., _T], *args: Any) -> _T:
    """Like ``run``, but the write's real outcome survives cancellation.

    If the caller is cancelled (once or repeatedly), the write still runs exactly once:
    a write already running is waited for, and one still queued is run anyway. Then the
    cancellation is re-raised.
    """
    write = _Write(function, args)
    try:
        return await run(write.run)
    except asyncio.CancelledError:
        await _uncancellable(write.finish())
        raise


@cache
def _caller(thread_sensitive: bool) -> SyncToAsync[..., Any]:
    # One wrapper per mode, reused: building a SyncToAsync per call costs measurable time.
    return SyncToAsync(_call, thread_sensitive=thread_sensitive)


def _call(function: Callable[..., _T], *args: Any) -> _T:
    return function(*args)


_QUEUED, _RUNNING, _FINISHED, _TAKEN_OVER = range(4)


class _Write(Generic[_T]):
    """One write that runs at most once, on whichever side claims it first."""

    def __init__(self, function: Callable[..., _T], args: tuple[Any, ...]) -> None:
        self._function, self._args = function, args
        self._lock = threading.Lock()
        self._state = _QUEUED
        self._finished: concurrent.futures.Future[None] | None = None

    def run(self) -> _T:
        """The body of the hop; does nothing if a cancelled caller took the write over."""
        with self._lock:
            if self._state != _QUEUED:
                return None  # type: ignore[return-value]  # nobody waits for this result
            self._state = _RUNNING
        try:
            return self._function(*self._args)
        finally:
            with self._lock:
                self._state = _FINISHED
                finished = self._finished
            if finished is not None:
                finished.set_result(None)

    async def finish(self) -> None:
        """After a cancellation: run the write if it never started, else wait for it."""
        finished: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            state = self._state
            if state == _QUEUED:
                # Still queued behind other work: the cancelled hop will never run it.
                self._state = _TAKEN_OVER
            elif state == _RUNNING:
                self._finished = finished
        if state == _QUEUED:
            await run(_call_ignoring_errors, self._function, *self._args)
        elif state == _RUNNING:
            await asyncio.wrap_future(finished)


def _call_ignoring_errors(function: Callable[..., Any], *args: Any) -> None:
    # The caller was cancelled: the cancellation, not this error, is what it will see.
    with contextlib.suppress(Exception):
        function(*args)


async def _uncancellable(awaitable: Any) -> None:
    """Await ``awaitable`` to the end, absorbing any further cancellations meanwhile."""
    task = asyncio.ensure_future(awaitable)
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            continue
    task.result()


def with_fresh_connections(function: Callable[_P, _T]) -> Callable[_P, _T]:
    """Replace stale or broken database connections around ``function``.

    For the operations of long-lived async callers: a connection older than
    ``CONN_MAX_AGE``, or one that a database restart broke, is closed (and, with
    ``CONN_HEALTH_CHECKS``, probed) before the operation and after it.
    """

    @wraps(function)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return wrapper
