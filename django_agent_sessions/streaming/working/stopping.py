"""A ``db_worker`` (django-tasks-db) told to stop ends after its current poll.

Its own SIGTERM / SIGINT handler exits at once (``sys.exit(0)``) when no task is running,
from wherever the signal lands; between tasks the worker is mostly polling its queue
inside a transaction, and an exit raised during that transaction's ``COMMIT`` fails on
the way out (psycopg: "can't change 'autocommit' now"), so a worker told to stop during
a deploy ends with status 1 and a traceback (seen in the test suite's drain test, whose
worker polls every 0.1 s). Here, once a run host starts in such a worker, the first
signal only clears the worker's ``running`` flag, as its handler already does while a
task runs: the worker ends its loop after the current poll (within its ``--interval``),
its main thread ends, and the run host drains (``host``). A second signal is the
worker's own (it forces the exit).
"""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType
from typing import Any

logger = logging.getLogger(__name__)

_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_requested = threading.Event()


def requested() -> bool:
    """Whether this worker was told to stop (it ends after its current poll)."""
    return _requested.is_set()


def after_the_current_poll() -> None:
    """In a ``db_worker``'s main thread: its stop signals end it after its current poll."""
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers belong to the main thread (a db_worker runs tasks there)
    for signum in _SIGNALS:
        worker = _db_worker_of(signal.getsignal(signum))
        if worker is not None:
            signal.signal(signum, _stopper(worker))


def _db_worker_of(handler: Any) -> Any:
    """The django-tasks-db worker whose ``shutdown`` is ``handler``, else None."""
    worker = getattr(handler, "__self__", None)
    module = type(worker).__module__ if worker is not None else ""
    if module.startswith("django_tasks_db") and getattr(handler, "__name__", "") == "shutdown":
        return worker
    return None


def _stopper(worker: Any) -> Any:
    def stop(signum: int, frame: FrameType | None) -> None:
        if not worker.running:  # told twice: the worker's own forced exit
            worker.shutdown(signum, frame)
            return
        logger.warning("Received %s: stopping after the current poll.", signal.strsignal(signum))
        _requested.set()
        worker.running = False

    return stop
