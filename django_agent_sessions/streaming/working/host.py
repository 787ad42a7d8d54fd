"""A task worker's run host: one event loop, in a thread of its own, that runs the runs
this process's tasks claimed.

A run is mostly waiting on the model, so one process runs many at once on one loop, as
a web worker does: a task hands its run to the host and returns, and the worker takes
its next task. This is what lets a
``db_worker`` (one task at a time) or a Celery worker hold up to ``RUNS_PER_WORKER`` runs;
a task past that number waits for a run to end, so other workers take the next ones.

The host lives as long as the process: its thread is not a daemon, so the interpreter
waits for it at exit. When the worker's main thread ends (the worker was told to stop),
the host drains like a web worker (``running.drain``): its runs get up to
``DRAIN_SECONDS``, and a run still going then ends ``interrupted``. It drains in one of
threading's exit hooks, which the interpreter calls before it joins threads: after them,
``concurrent.futures`` refuses new work, and every database hop of a run needs it. While
it runs, it also sweeps for runs whose worker died, every ``SWEEP_SECONDS`` (not in a web
worker: the immediate backend's host leaves that to the web worker, which sweeps while it
has tabs).
"""

from __future__ import annotations

import asyncio
import concurrent.futures.thread  # noqa: F401 - its exit hook registered before the host's
import contextvars
import logging
import os
import socket
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from django_agent_sessions import task_backends
from django_agent_sessions.conf import app_settings
from django_agent_sessions.layers import stream_layer
from django_agent_sessions.store import orders as store_orders
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.running import active_runs, drain
from django_agent_sessions.streaming.running.lost import sweep_once
from django_agent_sessions.streaming.working import execution, stopping

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

_host: RunHost | None = None
_host_lock = threading.Lock()


def run_host() -> RunHost:
    """This process's host, started on first use (a worker that runs no task has none)."""
    global _host
    with _host_lock:
        if _host is None or not _host.alive():
            # Workerless backends execute each task in the web worker that enqueued it:
            # no run waits in a queue there, and claiming ahead would take others' runs.
            ahead = 0 if _in_a_web_worker() else int(app_settings.RUNS_CLAIM_AHEAD)
            _host = RunHost(int(app_settings.RUNS_PER_WORKER), claim_ahead=ahead)
            stopping.after_the_current_poll()  # a db_worker's stop, at a safe point
        return _host


class RunHost:
    """The event loop thread of this process's runs (see the module)."""

    def __init__(self, capacity: int, *, claim_ahead: int = 0) -> None:
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self._slots = threading.BoundedSemaphore(capacity)
        self._ahead = claim_ahead
        self._loop = asyncio.new_event_loop()
        self._tasks: set[asyncio.Task[None]] = set()
        self._ready = threading.Event()
        self._stopping = asyncio.Event()
        self._thread = threading.Thread(target=self._serve, name="agent-sessions-runs")
        self._thread.start()
        self._ready.wait()
        # Threading's exit hooks run last registered first: this one before that of
        # concurrent.futures (imported before this module), which stops its thread pools.
        threading._register_atexit(self._drain_at_exit)  # type: ignore[attr-defined]

    def alive(self) -> bool:
        return self._thread.is_alive() and not self._loop.is_closed()

    def call(self, work: Coroutine[Any, Any, _T]) -> _T:
        """``work``, run on the host's loop, from sync code; its result."""
        done: Future[_T] = Future()

        async def run() -> None:
            try:
                done.set_result(await work)
            except BaseException as error:
                done.set_exception(error)

        self._submit(run)
        return done.result()

    def execute(self, run_id: str, execution_number: int) -> None:
        """Claim execution ``execution_number`` of ``run_id`` and hand it to the host,
        then return: the host runs it. Past ``RUNS_PER_WORKER`` runs, this waits for one
        of them to end first, unless the execution was claimed already (ahead of its
        task, by this worker or another: ``_claim_waiting``).

        The claim is made here, on the task's own thread and connection, not on the
        host's loop: there it would queue behind the database work of every run the host
        already runs (one sync thread serves them all), and a burst of new runs would wait
        that long for their first token. The thread may be the one the database work of
        async code shares (Django's immediate backend, in a web worker): the claim is
        sync work on it, and nothing here waits for the host."""
        if not self._slots.acquire(blocking=False):
            if execution.taken_here(run_id, execution_number):
                return  # claimed ahead of its task: nothing to wait for
            self._slots.acquire()
        try:
            claimed = execution.claim_here(run_id, execution_number, worker=self.worker)
        except BaseException:
            self._slots.release()
            raise
        if claimed is None:
            self._slots.release()
        else:
            self._hand_over(claimed)
        self._claim_waiting()

    def _claim_waiting(self) -> None:
        """Claim the starts whose tasks still wait in the queue, as many as the host has
        room for, up to ``claim_ahead`` (``RUNS_CLAIM_AHEAD``). A worker takes one task
        at a time, with its own bookkeeping each: under a burst of first messages, the
        last run of the burst waited for every task before its own. Their tasks,
        delivered later, find them taken. Not once the worker was told to stop: those
        runs are left to the other workers."""
        room = 0
        while room < self._ahead and not stopping.requested() and self._slots.acquire(False):
            room += 1
        claimed: list[store_orders.Claimed] = []
        try:
            if room:
                claimed = execution.claim_waiting_here(room, worker=self.worker)
        except Exception:  # each of those runs is still claimed by its own task
            logger.warning("Could not claim the runs waiting in the queue.", exc_info=True)
        for start in claimed:
            self._hand_over(start)
        for _unused in range(room - len(claimed)):
            self._slots.release()

    def _hand_over(self, claimed: store_orders.Claimed) -> None:
        """Run ``claimed`` on the host; its slot is released when it ends."""
        self._submit(lambda: self._run(claimed), then=self._slots.release)

    def _submit(
        self, work: Callable[[], Coroutine[Any, Any, None]], then: Callable[[], None] | None = None
    ) -> None:
        """Start ``work()`` on the host's loop, in a context of its own: the caller's may
        be that of asgiref's shared sync thread (a sync view, the immediate backend),
        whose "in use" mark would make every database hop of the run refuse to run."""

        def begin() -> None:
            task = self._loop.create_task(work())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            if then is not None:
                task.add_done_callback(lambda _task: then())

        self._loop.call_soon_threadsafe(begin, context=contextvars.Context())

    async def _run(self, claimed: store_orders.Claimed) -> None:
        try:
            await execution.run_claimed(claimed)
        except Exception:
            logger.exception(
                "Run %s (execution %s) failed in its host.", claimed.run_id, claimed.execution
            )

    def _serve(self) -> None:
        fanout.apart()  # a worker of its own, even beside a web worker's sockets
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._live())
        finally:
            self._loop.close()

    async def _live(self) -> None:
        self._ready.set()
        sweeping = asyncio.create_task(self._sweep())
        await self._stopping.wait()
        sweeping.cancel()
        if active_runs.local_runs():
            await drain.drain()

    def _drain_at_exit(self) -> None:
        # The main thread has ended: the interpreter's shutdown, in the main thread. The
        # runs drain here, while the thread pools of their database hops still work.
        if self.alive():
            self._loop.call_soon_threadsafe(self._stopping.set)
            self._thread.join()

    async def _sweep(self) -> None:
        if _in_a_web_worker():
            return  # its web worker sweeps (while it has tabs), as it always did
        seconds = min(float(app_settings.SWEEP_SECONDS), app_settings.RUN_LEASE_SECONDS / 4)
        while True:
            await asyncio.sleep(seconds)
            try:
                await sweep_once(stream_layer())
            except Exception:
                logger.warning("Could not sweep for lost runs.", exc_info=True)


def _in_a_web_worker() -> bool:
    """Whether runs are tasks of a backend without workers: the immediate one executes
    them in the web worker that enqueued them (development); the dummy one, never."""
    try:
        backend = task_backends.task_backends()[app_settings.RUNS_BACKEND]
    except Exception:
        return False
    return task_backends.workerless(type(backend).__name__)
