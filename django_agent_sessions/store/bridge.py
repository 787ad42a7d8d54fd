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

Long-lived callers (websocket consumers and runs) wrap their sync functions in
``store.health.with_fresh_connections``, which replaces stale or broken connections
around each one.

Measured on SQLite: wrapping each write in an extra task that is waited on (the simple
way to get that guarantee) cost about 15 microseconds per write; the hand-off below costs
nothing until a cancellation actually arrives.

The direct hop: where asgiref itself would pick its process-wide single sync thread (no
``async_to_sync`` caller above, no ``ThreadSensitiveContext``, no loop-bound executor:
plain asyncio programs, the Runner, benchmarks), ``run`` submits the function to that
same executor itself, skipping ``SyncToAsync``'s per-call bookkeeping (it copies and
restores the context, sets thread locals, shields the future). The function still runs
on the very thread and connection Django's async ORM uses, in a copy of the caller's
context. In every other situation it is ``SyncToAsync`` as before. ``tests/test_shortcuts_hop.py``
checks the asgiref internals this relies on (``direct_hop_supported``); if a release
changes them, the direct hop switches itself off.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
import weakref
from collections.abc import Callable
from functools import cache
from typing import Any, Generic, TypeVar

from asgiref.local import Local
from asgiref.sync import AsyncToSync, SyncToAsync

from django_agent_sessions.conf import app_settings

_T = TypeVar("_T")


async def run(function: Callable[..., _T], *args: Any) -> _T:
    """Run ``function(*args)`` on the sync thread and return its result."""
    thread_sensitive = app_settings.THREAD_SENSITIVE
    if thread_sensitive and _direct_hop_possible():
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            SyncToAsync.single_thread_executor, context.run, function, *args
        )
    result: _T = await _caller(thread_sensitive)(function, *args)
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


def direct_hop_supported() -> bool:
    """Whether this asgiref has the attributes its executor choice is made of."""
    return (
        isinstance(
            getattr(SyncToAsync, "single_thread_executor", None), concurrent.futures.Executor
        )
        and isinstance(
            getattr(SyncToAsync, "thread_sensitive_context", None), contextvars.ContextVar
        )
        and isinstance(getattr(SyncToAsync, "deadlock_context", None), contextvars.ContextVar)
        and isinstance(getattr(AsyncToSync, "executors", None), Local)
        and isinstance(getattr(AsyncToSync, "loop_thread_executors", None), dict)
    )


_DIRECT_HOP = direct_hop_supported()


def _direct_hop_possible() -> bool:
    """True exactly where ``SyncToAsync(thread_sensitive=True)`` would use its one
    process-wide thread (``SyncToAsync.__call__`` in asgiref 3.x) and nothing forbids it."""
    if not _DIRECT_HOP or _SHIPPED_ONLY.get():
        return False
    if SyncToAsync.thread_sensitive_context.get(None) is not None:
        return False
    loop = asyncio.get_running_loop()
    if loop in AsyncToSync.loop_thread_executors or SyncToAsync.deadlock_context.get(False):
        return False
    return _no_sync_caller(asyncio.current_task(loop))


# The task known to run with no ``async_to_sync`` caller above it, kept in the task's own
# context (a context variable is read in C; a task made later inherits the value but is
# another task, so it looks for itself). A weak reference: the task's context must not
# keep the task, and its result, alive.
_WITHOUT_SYNC_CALLER: contextvars.ContextVar[Callable[[], asyncio.Task[Any] | None]] = (
    contextvars.ContextVar("agent_sessions_without_sync_caller", default=lambda: None)
)


def _no_sync_caller(task: asyncio.Task[Any] | None) -> bool:
    """Whether ``AsyncToSync.executors.current`` is unset (no ``async_to_sync`` caller),
    remembered per task: asgiref's ``Local`` was the costliest part of the hop (about
    20 microseconds in a busy loop).

    Remembering is sound because, outside a ``ThreadSensitiveContext`` (checked before
    this, on every call), a task's value never changes: asgiref sets it only in the
    synchronous caller's context, copied into the task when the task is made, and
    ``ThreadSensitiveContext`` restores the value it found when it exits.
    """
    if task is not None and _WITHOUT_SYNC_CALLER.get()() is task:
        return True
    if getattr(AsyncToSync.executors, "current", None) is not None:
        return False
    if task is not None:
        _WITHOUT_SYNC_CALLER.set(weakref.ref(task))
    return True


# Set by ``shipped_path()``: every operation takes the general path (for tests and the
# parity benchmark, which compares both in one process).
_SHIPPED_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "agent_sessions_shipped_only", default=False
)


@contextlib.contextmanager
def shipped_path() -> Any:
    """Within this block (and the hops it starts) no shortcut is taken."""
    token = _SHIPPED_ONLY.set(True)
    try:
        yield
    finally:
        _SHIPPED_ONLY.reset(token)


def shortcuts_allowed() -> bool:
    return not _SHIPPED_ONLY.get()


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
