"""``running.dispatch``: runs as tasks from the web tier's side. A run whose task the
backend refuses ends failed (``unavailable``) with an output for every call it holds,
and leaves its conversation free; a Stop of a queued run that no task claimed ends it
cancelled, and the task delivered later finds nothing to do.

The backends are the framework's own: an alias that does not exist (every enqueue
fails), and the ``DummyBackend`` (it keeps the task and never executes it)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import override_settings

from django_agent_sessions import DjangoSession, start_run, task_backends
from django_agent_sessions.layers import stream_layer
from django_agent_sessions.models import AgentRun, AgentSession, RunOrder
from django_agent_sessions.store import approvals, open_calls, orders, runs
from django_agent_sessions.streaming.running import dispatch, run_task
from django_agent_sessions.streaming.working import execution
from tests import order_agent
from tests.conftest import user_message
from tests.store.helpers import call, outputs_of, write
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

NEVER = "never"  # a DummyBackend alias: enqueued, never executed
NOWHERE = "nowhere"  # no such alias: every enqueue fails


def tasks_on(backend: str, **extra: Any) -> dict[str, Any]:
    return {
        "AGENT": order_agent.PATH,
        "RUNS": "tasks",
        "RUNS_BACKEND": backend,
        "RATE_LIMIT": None,
        "DELTA_FLUSH_SECONDS": 0.01,
        **extra,
    }


@pytest.fixture
def enqueued(settings: Any) -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """The TASKS setting with a backend that never executes (``NEVER``), and every task
    enqueued meanwhile: (backend alias, args)."""
    framework = task_backends.framework_module()
    settings.TASKS = {
        **settings.TASKS,
        NEVER: {"BACKEND": f"{framework}.backends.dummy.DummyBackend"},
    }
    seen: list[tuple[str, tuple[Any, ...]]] = []

    def note(sender: Any, task_result: Any, **kwargs: Any) -> None:
        seen.append((task_result.backend, tuple(task_result.args)))

    signal = task_backends.submodule("signals").task_enqueued
    signal.connect(note, weak=False)
    order_agent.reset()
    yield seen
    signal.disconnect(note)
    # The run task is built on first use, against the settings of then.
    from django_agent_sessions.streaming.working import tasks

    tasks.__dict__.pop("execute_run", None)


async def status_of(run_id: str) -> tuple[str, str]:
    run = await AgentRun.objects.aget(run_id=run_id)
    return run.status, run.error_code


async def test_a_run_the_backend_refuses_ends_unavailable_and_frees_its_conversation(
    enqueued: list[tuple[str, tuple[Any, ...]]],
) -> None:
    with override_settings(AGENT_SESSIONS=tasks_on(NOWHERE)):
        run_id = await start_run("refused", "Count once")
        assert await status_of(run_id) == ("failed", "unavailable")
        order = await RunOrder.objects.aget(run__run_id=run_id)
        assert (order.ordered, order.claimed, order.claimed_by) == (1, 1, "stop")
        # The conversation is free: its next run is taken.
        with override_settings(AGENT_SESSIONS=tasks_on(NEVER)):
            again = await start_run("refused", "Count once more")
        assert await status_of(again) == ("running", "")
    assert enqueued == [(NEVER, (again, 1))]
    # The refused run never reached a model, nor stored anything.
    assert order_agent.MODEL_CALLS == {}
    assert await DjangoSession("refused").get_items() == []


async def test_a_run_claimed_ahead_of_its_refused_task_runs_on(
    enqueued: list[tuple[str, tuple[Any, ...]]],
) -> None:
    """A task worker claimed the run from the queue's waiting starts before the backend
    refused its task: it runs, and the refusal neither ends nor stops it."""
    with override_settings(AGENT_SESSIONS=tasks_on(NEVER)):
        run_id = await start_run("ahead", "Count once")
    claimed = await orders.claim_waiting(1, worker="ahead", lease_seconds=60.0)
    assert [start.run_id for start in claimed] == [run_id]
    conversation = await AgentSession.objects.aget(session_id="ahead")
    with override_settings(AGENT_SESSIONS=tasks_on(NOWHERE)):
        assert await dispatch.enqueue(
            run_id, 1, session_pk=conversation.pk, seq=0, channel_layer=stream_layer(), user=None
        )
    assert await status_of(run_id) == ("running", "")
    order = await RunOrder.objects.aget(run__run_id=run_id)
    assert (order.claimed_by, order.cancel_requested) == ("ahead", False)


async def test_a_tabs_message_the_backend_refuses_ends_unavailable(
    enqueued: list[tuple[str, tuple[Any, ...]]], alice_cookie: bytes, settings: Any
) -> None:
    settings.AGENT_SESSIONS = tasks_on(NOWHERE)
    socket = Socket("tab-refused", alice_cookie)
    await socket.open()
    await socket.send({"type": "user_message", "text": "Count once", "client_id": "m-1"})
    frames = await socket.until("run.failed")
    failed = frames[-1]
    assert failed["error"]["code"] == "unavailable"
    assert await status_of(failed["run_id"]) == ("failed", "unavailable")
    # The next message is taken (not busy): queued for a task that never comes, here.
    settings.AGENT_SESSIONS = tasks_on(NEVER)
    await socket.send({"type": "user_message", "text": "Count again", "client_id": "m-2"})
    await eventually(lambda: bool(enqueued))
    [(backend, (run_id, execution_number))] = enqueued
    assert (backend, execution_number) == (NEVER, 1)
    assert await status_of(run_id) == ("running", "")
    # A Stop from the tab ends it here, as no task claimed it.
    await socket.send({"type": "cancel", "run_id": run_id})
    frames = await socket.until("run.cancelled")
    assert frames[-1]["run_id"] == run_id
    assert await status_of(run_id) == ("cancelled", "")


async def eventually(condition: Callable[[], bool]) -> None:
    for _ in range(400):
        if condition():
            return
        await asyncio.sleep(0.025)
    raise AssertionError("waited 10 s in vain")


async def test_a_stop_of_a_queued_run_ends_it_and_its_task_finds_nothing_to_do(
    enqueued: list[tuple[str, tuple[Any, ...]]],
) -> None:
    with override_settings(AGENT_SESSIONS=tasks_on(NEVER)):
        run_id = await start_run("queued", "Count once")
        assert enqueued == [(NEVER, (run_id, 1))]
        conversation = await AgentSession.objects.aget(session_id="queued")
        layer = stream_layer()
        assert await dispatch.stop(layer, conversation.pk, run_id=run_id, user=None)
        assert await status_of(run_id) == ("cancelled", "")
        # The task, delivered now (or again), claims nothing and runs no agent (the
        # one start_run built told it the agent's name).
        assert await execution.execute(run_id, 1, worker="late") == execution.TAKEN
        assert order_agent.AGENTS_MADE == {"queued": 1}
        assert order_agent.MODEL_CALLS == {}
        # A second Stop finds nothing to end.
        assert not await dispatch.stop(layer, conversation.pk, run_id=run_id, user=None)


async def test_a_stop_of_a_claimed_run_is_left_to_its_task(
    enqueued: list[tuple[str, tuple[Any, ...]]],
) -> None:
    with override_settings(AGENT_SESSIONS=tasks_on(NEVER)):
        run_id = await start_run("claimed", "Count once")
        claimed = await orders.claim(run_id, 1, worker="task", lease_seconds=60)
        assert claimed is not None
        layer = stream_layer()
        assert not await dispatch.stop(layer, claimed.session_pk, run_id=run_id, user=None)
        assert await status_of(run_id) == ("running", "")
        assert await orders.stop_requested(claimed.run_pk)


@pytest.fixture
async def paused_run(session_id: str) -> AgentRun:
    """A run placed for a task, claimed, and paused on two calls needing approval."""

    def pause() -> AgentRun:
        conversation = write(session_id, user_message("Pay Ann and Bob"))
        order = orders.Order(orders.TAB, {"text": "Pay Ann and Bob"}, agent=order_agent.PATH)
        started = runs.start.sync(conversation.pk, agent_name="P", lease_seconds=60, order=order)
        assert started is not None
        assert orders.claim.sync(started.run_id, 1, worker="w", lease_seconds=60) is not None
        write(session_id, call("c1", "pay"), call("c2", "pay"))
        calls = [
            approvals.RequestedCall("c1", "pay", "{}"),
            approvals.RequestedCall("c2", "pay", "{}"),
        ]
        expires = approvals.pause.sync(
            started.pk, state="STATE", seq=3, calls=calls, usage={}, timeout=timedelta(minutes=5)
        )
        assert expires is not None
        return AgentRun.objects.get(pk=started.pk)

    return await sync_to_async(pause)()


async def test_a_resumption_the_backend_refuses_ends_with_an_output_for_every_call(
    enqueued: list[tuple[str, tuple[Any, ...]]], paused_run: AgentRun, session_id: str
) -> None:
    async def no_request() -> Any:
        raise AssertionError("a handed-off resumption builds no request here")

    async def decide(call_id: str, approve: bool) -> bool:
        return await run_task.decide(
            no_request,
            paused_run.session_id,
            call_id,
            approve=approve,
            message="" if approve else "Not Bob.",
            user=None,
            user_id=None,
            channel_layer=stream_layer(),
        )

    with override_settings(AGENT_SESSIONS=tasks_on(NOWHERE)):
        assert await decide("c1", True)
        assert await decide("c2", False)
    run_id = str(paused_run.run_id)
    assert await status_of(run_id) == ("failed", "unavailable")
    # Every call has its output: the approved one says it never ran, the rejected one why.
    outputs = await sync_to_async(outputs_of)(session_id)
    assert outputs == {"c1": open_calls.NOT_RESUMED_CALL, "c2": "Not Bob."}
    assert (await AgentRun.objects.aget(pk=paused_run.pk)).state == ""  # nothing to resume
    order = await RunOrder.objects.aget(run_id=paused_run.pk)
    assert (order.ordered, order.claimed, order.claimed_by) == (2, 2, "stop")
    assert await execution.execute(run_id, 2, worker="late") == execution.TAKEN
    assert enqueued == []


async def test_an_execution_is_enqueued_in_one_hop_to_the_database_thread(
    monkeypatch: pytest.MonkeyPatch, session_id: str
) -> None:
    """On django-tasks-db: its row and its ``task_enqueued`` signal in one hop (the
    framework's ``aenqueue`` makes two, a burst of first messages waits for each)."""
    from asgiref.sync import SyncToAsync

    conversation = await sync_to_async(write)(session_id, user_message("Hi"))
    order = orders.Order(orders.TAB, {"text": "Hi", "parts": [], "files": []})
    started = await runs.start(conversation.pk, agent_name="A", lease_seconds=60, order=order)
    assert started is not None
    # Every hop, through the store's bridge or asgiref, is a job for this executor.
    executor = SyncToAsync.single_thread_executor
    hops = 0
    submitting = executor.submit

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal hops
        hops += 1
        return submitting(*args, **kwargs)

    monkeypatch.setattr(executor, "submit", counted)
    with override_settings(AGENT_SESSIONS=tasks_on("database")):
        sent = await dispatch.enqueue(
            started.run_id, 1, session_pk=conversation.pk, seq=0, channel_layer=None, user=None
        )
    monkeypatch.undo()
    assert sent
    assert hops == 1
    from django_tasks_db.models import DBTaskResult

    task = await DBTaskResult.objects.aget(args_kwargs__args=[started.run_id, 1])
    assert task.task_path == dispatch.RUN_TASK
