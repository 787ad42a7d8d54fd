"""``working.host``: a task worker's run host. ``execute`` hands a run to the host's loop
and returns, up to ``RUNS_PER_WORKER`` runs at once, and past that waits for one to end;
``call`` runs a coroutine there from sync code; the host's thread is a worker of its own
beside a web worker's sockets (``fanout.apart``). Its drain at process exit is tested
with the worker processes."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from django_agent_sessions.models import AgentRun, AgentSession, RunOrder
from django_agent_sessions.store import orders, runs
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.working.host import RunHost, run_host
from tests import order_agent

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 15.0  # the most any awaited event may take


@pytest.fixture(scope="module")
def host() -> RunHost:
    """A host of two runs (``RUNS_PER_WORKER = 2``). Like a worker's, it lives as long as
    the process (its thread ends at the interpreter's exit)."""
    return RunHost(2)


@pytest.fixture(autouse=True)
def _gated(settings: Any) -> Iterator[None]:
    settings.AGENT_SESSIONS = {"AGENT": order_agent.GATED, "RUNS": "tasks", "RATE_LIMIT": None}
    order_agent.reset()
    yield
    for event in list(order_agent.GATES.values()):  # a failing test leaves no run waiting
        event.set()


def place(session_id: str) -> str:
    """A run of a new conversation with the gated agent, placed for a task; its id."""
    conversation = AgentSession.objects.create(session_id=session_id)
    order = orders.Order(orders.CODE, {"text": "Wait for it"}, agent=order_agent.GATED)
    started = runs.start.sync(conversation.pk, agent_name="Gated", lease_seconds=300, order=order)
    assert started is not None
    return started.run_id


def ended(run_id: str) -> str:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status = AgentRun.objects.values_list("status", flat=True).get(run_id=run_id)
        if status not in ("running", "waiting"):
            return status
        time.sleep(0.02)
    raise AssertionError(f"run {run_id} did not end")


def test_past_its_capacity_a_run_waits_for_one_to_end(host: RunHost) -> None:
    first, second, third = (place(f"cap-{n}") for n in range(3))
    host.execute(first, 1)
    host.execute(second, 1)
    assert order_agent.asked("cap-0").wait(WAIT)
    assert order_agent.asked("cap-1").wait(WAIT)
    handed = threading.Event()

    def deliver_third() -> None:
        host.execute(third, 1)
        handed.set()

    threading.Thread(target=deliver_third, daemon=True).start()
    # Two runs going: the third task waits (its worker takes nothing else meanwhile),
    # and nothing of its run has started: its execution is not even claimed.
    assert not handed.wait(0.3)
    assert RunOrder.objects.get(run__run_id=third).claimed == 0
    order_agent.gate("cap-0").set()  # the first run answers and ends
    assert handed.wait(WAIT)
    assert order_agent.asked("cap-2").wait(WAIT)
    assert ended(first) == "completed"
    order_agent.gate("cap-1").set()
    order_agent.gate("cap-2").set()
    assert (ended(second), ended(third)) == ("completed", "completed")
    assert order_agent.AGENTS_MADE == {"cap-0": 1, "cap-1": 1, "cap-2": 1}


def test_a_delivery_that_finds_its_run_taken_frees_its_place(host: RunHost) -> None:
    run_id = place("taken")
    order_agent.gate("taken").set()
    host.execute(run_id, 1)
    assert ended(run_id) == "completed"
    # Redelivered, three times over a capacity of two: each finds it taken and returns.
    done = threading.Event()

    def redeliver() -> None:
        for _ in range(3):
            host.execute(run_id, 1)
        done.set()

    threading.Thread(target=redeliver, daemon=True).start()
    assert done.wait(WAIT)
    assert order_agent.AGENTS_MADE == {"taken": 1}


def test_call_returns_what_the_coroutine_returns_from_sync_code(host: RunHost) -> None:
    async def on_the_host() -> tuple[str, bool]:
        await asyncio.sleep(0)
        return threading.current_thread().name, asyncio.get_running_loop().is_running()

    assert host.call(on_the_host()) == ("agent-sessions-runs", True)

    async def failing() -> None:
        raise ValueError("raised on the host")

    with pytest.raises(ValueError, match="raised on the host"):
        host.call(failing())


def test_the_database_work_of_a_call_is_the_callers(host: RunHost) -> None:
    # start_run_sync goes through call(): the store's hops work from the host's loop.
    conversation = AgentSession.objects.create(session_id="called")
    started = host.call(runs.start(conversation.pk, agent_name="Gated", lease_seconds=60))
    assert started is not None
    assert AgentRun.objects.get(pk=started.pk).status == "running"


def test_the_host_is_a_worker_apart_from_this_threads_sockets(host: RunHost) -> None:
    channel = f"test-host.socket-{uuid.uuid4().hex}"
    fanout.watch(4242, channel, lambda message: None)
    try:
        assert fanout.is_local(channel)

        async def seen_from_the_host() -> bool:
            return fanout.is_local(channel)

        # A run in the host tells this thread's sockets through the channel layer, as
        # one in another process would, never by handing its events over in memory.
        assert host.call(seen_from_the_host()) is False
    finally:
        fanout.unwatch(channel)


def test_the_process_has_one_host() -> None:
    assert run_host() is run_host()
    assert run_host().alive()
