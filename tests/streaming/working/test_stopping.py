"""``stopping``: a ``db_worker`` told to stop ends after its current poll, never from
inside its polling transaction (its own handler's ``sys.exit`` there ends the worker with
status 1); a second signal is the worker's own forced exit."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django_tasks_db.management.commands.db_worker import Worker

from django_agent_sessions.streaming.working import stopping


def handler(signum: signal.Signals) -> Any:
    """The Python function handling ``signum`` now."""
    return signal.getsignal(signum)


@pytest.fixture
def worker() -> Iterator[Any]:
    """A django-tasks-db worker whose handlers are installed, as its command does."""
    before = {signum: signal.getsignal(signum) for signum in stopping._SIGNALS}
    worker = Worker(
        queue_names=["default"],
        interval=0.1,
        batch=False,
        backend_name="database",
        startup_delay=False,
        max_tasks=None,
        worker_id="test",
        excluded_queue_names=[],
    )
    worker.configure_signals()
    yield worker
    for signum, handler in before.items():
        signal.signal(signum, handler)


def test_its_own_handler_exits_from_wherever_the_signal_lands(worker: Any) -> None:
    with pytest.raises(SystemExit):  # what the module works around
        handler(signal.SIGTERM)(signal.SIGTERM, None)


def test_the_first_signal_ends_its_loop_after_the_current_poll(
    worker: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stopping, "_requested", threading.Event())  # this test's own
    stopping.after_the_current_poll()
    assert not stopping.requested()
    handler(signal.SIGTERM)(signal.SIGTERM, None)  # no exit here
    assert worker.running is False
    assert stopping.requested()  # its run host claims no more runs ahead
    with pytest.raises(SystemExit):  # told twice: its own forced exit
        handler(signal.SIGINT)(signal.SIGINT, None)


def test_other_handlers_are_left_alone() -> None:
    def mine(signum: int, frame: Any) -> None: ...

    before = signal.signal(signal.SIGTERM, mine)
    try:
        stopping.after_the_current_poll()
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)
