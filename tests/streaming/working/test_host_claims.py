"""``working.host``: with each task it takes, a host claims the starts whose tasks still
wait in the queue (``RUNS_CLAIM_AHEAD``), as many as it has room for, and runs them; their
tasks, delivered later, return at once even while the host is full. Not once the worker
was told to stop. Several task workers claiming at once: ``test_tasks_workers.py``."""

from __future__ import annotations

import threading

import pytest

from django_agent_sessions.models import RunOrder
from django_agent_sessions.streaming.working import stopping
from django_agent_sessions.streaming.working.host import RunHost
from tests import order_agent
from tests.streaming.working.test_host import WAIT, _gated, ended, place  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def host() -> RunHost:
    """A host of three runs that claims up to five ahead."""
    return RunHost(3, claim_ahead=5)


def claimed_by(run_id: str) -> str:
    return RunOrder.objects.values_list("claimed_by", flat=True).get(run__run_id=run_id)


def deliver(host: RunHost, run_id: str) -> threading.Event:
    """``run_id``'s task, delivered on a thread of its own: set once it returned."""
    returned = threading.Event()

    def task() -> None:
        host.execute(run_id, 1)
        returned.set()

    threading.Thread(target=task, daemon=True).start()
    return returned


def test_a_task_claims_the_waiting_starts_the_host_has_room_for(host: RunHost) -> None:
    runs = [place(f"ahead-{n}") for n in range(4)]
    host.execute(runs[0], 1)
    # Its own run and the two oldest waiting ones: the host is full; the fourth waits.
    for number in range(3):
        assert order_agent.asked(f"ahead-{number}").wait(WAIT)
        assert claimed_by(runs[number]) == host.worker
    assert RunOrder.objects.get(run__run_id=runs[3]).claimed == 0
    # The tasks of the runs claimed ahead return at once, although the host is full.
    assert deliver(host, runs[1]).wait(WAIT)
    assert deliver(host, runs[2]).wait(WAIT)
    # The fourth's task waits for room; a run ends and it is claimed and run.
    fourth = deliver(host, runs[3])
    order_agent.gate("ahead-0").set()
    assert fourth.wait(WAIT)
    assert order_agent.asked("ahead-3").wait(WAIT)
    for number in range(1, 4):
        order_agent.gate(f"ahead-{number}").set()
    assert [ended(run_id) for run_id in runs] == ["completed"] * 4
    assert {f"ahead-{n}": 1 for n in range(4)} == order_agent.AGENTS_MADE


def test_a_worker_told_to_stop_leaves_the_waiting_starts_to_others(
    host: RunHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    own, waiting = place("stopping-own"), place("stopping-waiting")
    monkeypatch.setattr(stopping, "requested", lambda: True)
    order_agent.gate("stopping-own").set()
    host.execute(own, 1)
    assert ended(own) == "completed"
    assert RunOrder.objects.get(run__run_id=waiting).claimed == 0
    monkeypatch.undo()
    order_agent.gate("stopping-waiting").set()
    host.execute(waiting, 1)
    assert ended(waiting) == "completed"
