"""Runs as tasks (``AGENT_SESSIONS["RUNS"] = "tasks"``) executed by real task worker
processes on the test database: ``db_worker`` processes of django-tasks-db, and a Celery
worker of our Celery backend on the test run's Redis.

Runs started from code complete in the workers, spread over them; a worker killed with
SIGKILL mid-run has its run ended ``worker_lost`` by the other worker's sweep within the
lease, and a redelivery of the task runs nothing; a worker told to stop (SIGTERM) drains
and exits; a second Celery delivery runs nothing; a tab on a daphne web worker follows a
run that a task worker executes, and its Stop reaches it there.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import override_settings
from django.utils.module_loading import import_string

from django_agent_sessions import start_run
from django_agent_sessions.models import AgentRun, RunOrder, SessionItem
from django_agent_sessions.streaming.running.dispatch import RUN_TASK
from django_agent_sessions.task_backends.celery import TASK_NAME
from tests.daphne_workers import Worker
from tests.live_clients import LiveSocket
from tests.processes import worker_env
from tests.task_workers import TaskWorker, celery_worker, db_workers, require_redis
from tests.websockets import login_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.long(45)]

AGENT = "tests.chat_agent.make_demo_agent"
LEASE_SECONDS = 2
SWEEP_EVERY = LEASE_SECONDS / 4  # min(SWEEP_SECONDS, RUN_LEASE_SECONDS / 4)
DRAIN_SECONDS = 2.0
RUNS_PER_WORKER = 2
# The demo agent echoes a message in 3-character tokens 10 ms apart ("You said: ..."),
# and writes for about ten seconds when asked for something "long".
LONG = "tell me a long story"
RUNS = {
    "RUNS": "tasks",
    "RUNS_BACKEND": "database",
    "RUN_LEASE_SECONDS": LEASE_SECONDS,
    "DRAIN_SECONDS": DRAIN_SECONDS,
    "SETTLE_SECONDS": 2.0,
    "RUNS_PER_WORKER": RUNS_PER_WORKER,
}
HERE = {"AGENT": AGENT, "RATE_LIMIT": None, **RUNS}  # the test process's settings
EXECUTION = "django_agent_sessions.streaming.working.execution"
TERMINAL = {"run.completed", "run.cancelled", "run.failed"}


def worker_settings(prefix: str, **runs: Any) -> dict[str, str]:
    """The environment of a task or web worker: the demo agent, ``RUNS`` (updated with
    ``runs``), the channel prefix, and the INFO lines of the run's execution."""
    return {
        "AGENT_SESSIONS_TEST_AGENT": AGENT,
        "AGENT_SESSIONS_TEST_SETTINGS": json.dumps({**RUNS, **runs}),
        "AGENT_SESSIONS_CHANNEL_PREFIX": prefix,
        "AGENT_SESSIONS_TEST_INFO_LOGGERS": EXECUTION,
    }


def new_prefix(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}:"


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[list[TaskWorker]]:
    """Two db_workers of the ``database`` alias; their output is shown if the test fails."""
    with db_workers(tmp_path, 2, **worker_settings(new_prefix("tasks"))) as started:
        yield started


@pytest.fixture
def one_worker(tmp_path: Path) -> Iterator[TaskWorker]:
    with db_workers(tmp_path, 1, **worker_settings(new_prefix("drain"))) as started:
        yield started[0]


async def ended(run_id: str, timeout: float = 20) -> AgentRun:
    """The run's record once it ended (bounded)."""
    deadline = time.monotonic() + timeout
    while True:
        run = await AgentRun.objects.aget(run_id=run_id)
        if run.status not in ("running", "waiting"):
            return run
        assert time.monotonic() < deadline, f"run {run_id} did not end: {run.status}"
        await asyncio.sleep(0.02)


async def claimed(run_id: str, timeout: float = 20) -> RunOrder:
    """The run's order once a task worker claimed its start (bounded)."""
    deadline = time.monotonic() + timeout
    while True:
        order = await RunOrder.objects.aget(run__run_id=run_id)
        if order.claimed >= 1:
            return order
        assert time.monotonic() < deadline, f"no worker claimed run {run_id}"
        await asyncio.sleep(0.02)


def claimer(order: RunOrder, workers: list[TaskWorker]) -> TaskWorker:
    [found] = [worker for worker in workers if worker.owns(order.claimed_by)]
    return found


@sync_to_async
def history(session_id: str) -> list[dict[str, Any]]:
    rows = SessionItem.objects.filter(session__session_id=session_id).order_by("id")
    return [row.data for row in rows]


def assert_valid(items: list[dict[str, Any]], first: str) -> None:
    """The history starts with the user's message, and every call has its output."""
    assert items[0] == {"role": "user", "content": first}, items[:1]
    calls = {i["call_id"] for i in items if i.get("type") == "function_call"}
    outputs = {i["call_id"] for i in items if i.get("type") == "function_call_output"}
    assert calls == outputs, items


def reply_of(items: list[dict[str, Any]]) -> str:
    last = items[-1]
    assert last.get("role") == "assistant", items
    return "".join(part["text"] for part in last["content"])


async def warm(workers: list[TaskWorker]) -> None:
    """Short runs one at a time until each worker claimed one: each has its run host
    then, which sweeps for lost runs (a worker that never took a task has none)."""
    seen: set[int] = set()
    for number in range(30):
        with override_settings(AGENT_SESSIONS=HERE):
            run_id = await start_run(None, f"warm up {number}")
        assert (await ended(run_id)).status == "completed"
        order = await RunOrder.objects.aget(run__run_id=run_id)
        seen.add(claimer(order, workers).pid)
        if len(seen) == len(workers):
            return
    raise AssertionError("one worker took every run")


async def test_runs_complete_spread_over_two_db_workers(workers):
    texts = [f"Number {n}: " + "tell me something " * 5 for n in range(6)]
    with override_settings(AGENT_SESSIONS=HERE):
        run_ids = [await start_run(f"spread-{n}", text) for n, text in enumerate(texts)]
    for n, (run_id, text) in enumerate(zip(run_ids, texts, strict=True)):
        run = await ended(run_id)
        assert (run.status, run.error_code) == ("completed", "")
        items = await history(f"spread-{n}")
        assert_valid(items, text)
        assert reply_of(items) == f"You said: {text}"
    orders = [o async for o in RunOrder.objects.filter(run__run_id__in=run_ids)]
    assert {o.claimed for o in orders} == {1}
    # At most RUNS_PER_WORKER runs at once in a worker (one more task waits in it): the
    # other worker takes the next ones.
    assert {claimer(o, workers).pid for o in orders} == {w.pid for w in workers}
    assert "Traceback" not in workers[0].log() + workers[1].log()


async def test_a_killed_worker_s_run_ends_worker_lost_and_is_not_run_again(workers):
    await warm(workers)
    with override_settings(AGENT_SESSIONS=HERE):
        run_id = await start_run("killed", LONG)
    victim = claimer(await claimed(run_id), workers)
    [survivor] = [w for w in workers if w is not victim]
    await asyncio.sleep(0.5)  # writing its reply
    victim.signal(signal.SIGKILL)
    killed = time.monotonic()
    run = await ended(run_id, timeout=LEASE_SECONDS + 10)
    detected = time.monotonic() - killed
    print(f"MEASURED worker_lost {detected:.2f}s after SIGKILL (lease {LEASE_SECONDS}s)")
    assert (run.status, run.error_code) == ("failed", "worker_lost")
    # The lease, then at most one sweep of the other worker, and its hops.
    assert detected < LEASE_SECONDS + SWEEP_EVERY + 1.5
    items = await history("killed")
    assert_valid(items, LONG)

    # The task delivered again (a redelivery after its worker died): nothing runs.
    result = await import_string(RUN_TASK).using(backend="database").aenqueue(run_id, 1)
    survivor.wait_for_log(f"Run {run_id} execution 1 was taken or has ended", timeout=15)
    assert (await _task_status(result.id)) == "SUCCESSFUL"
    again = await AgentRun.objects.aget(run_id=run_id)
    assert (again.status, again.error_code, again.event_seq) == (
        "failed",
        "worker_lost",
        run.event_seq,
    )
    assert await history("killed") == items
    order = await RunOrder.objects.aget(run__run_id=run_id)
    assert order.claimed == 1 and victim.owns(order.claimed_by)
    assert "Traceback" not in survivor.log()


@sync_to_async
def _task_status(result_id: str) -> str:
    from django_tasks_db.models import DBTaskResult

    deadline = time.monotonic() + 10
    while True:
        status = str(DBTaskResult.objects.get(id=result_id).status)
        if status in ("SUCCESSFUL", "FAILED") or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


async def test_sigterm_drains_the_worker_its_long_run_interrupted(one_worker):
    fits = "Finish me please " * 3  # about half a second
    with override_settings(AGENT_SESSIONS=HERE):
        long_id = await start_run("drain-long", LONG)
        await claimed(long_id)
        short_id = await start_run("drain-short", fits)
        await claimed(short_id)
    await asyncio.sleep(0.1)
    one_worker.signal(signal.SIGTERM)
    signalled = time.monotonic()
    short, long = await ended(short_id), await ended(long_id)
    stopped = time.monotonic() - signalled
    assert (short.status, short.error_code) == ("completed", "")
    assert reply_of(await history("drain-short")) == f"You said: {fits}"
    assert (long.status, long.error_code) == ("interrupted", "interrupted")
    assert_valid(await history("drain-long"), LONG)
    assert DRAIN_SECONDS - 0.5 < stopped < DRAIN_SECONDS + 3, stopped
    assert await asyncio.to_thread(one_worker.wait, DRAIN_SECONDS + 10) == 0
    exited = time.monotonic() - signalled
    print(f"MEASURED drain: long run ended {stopped:.2f}s, worker exited {exited:.2f}s")
    log = one_worker.log()
    assert "Drained." in log and "Traceback" not in log, log


@pytest.mark.redis
async def test_a_celery_worker_runs_runs_once(tmp_path, settings):
    from tests.task_backends import celery_app

    redis_url = require_redis()
    prefix = new_prefix("celery-runs")
    celery_app.configure(redis_url, prefix)
    backend = "django_agent_sessions.task_backends.celery.CeleryBackend"
    settings.TASKS = {
        **settings.TASKS,
        "celery": {"BACKEND": backend, "OPTIONS": {"APP": "tests.task_backends.celery_app.app"}},
    }
    env = worker_settings(new_prefix("celery"), RUNS_BACKEND="celery")
    with celery_worker(tmp_path / "celery.log", prefix=prefix, **env) as worker:
        texts = ["Hello Celery", "Hello again Celery"]
        with override_settings(AGENT_SESSIONS={**HERE, "RUNS_BACKEND": "celery"}):
            run_ids = [await start_run(f"celery-{n}", text) for n, text in enumerate(texts)]
        for n, (run_id, text) in enumerate(zip(run_ids, texts, strict=True)):
            run = await ended(run_id)
            assert (run.status, run.error_code) == ("completed", "")
            assert reply_of(await history(f"celery-{n}")) == f"You said: {text}"

        # The same task delivered a second time (acks_late, a redelivery): nothing runs.
        before = await history("celery-0")
        sent = celery_app.app.send_task(TASK_NAME, args=(RUN_TASK, [run_ids[0], 1], {}, "celery"))
        assert await asyncio.to_thread(sent.get, timeout=20) is None
        worker.wait_for_log(f"Run {run_ids[0]} execution 1 was taken or has ended", timeout=15)
        assert await history("celery-0") == before
        assert (await AgentRun.objects.aget(run_id=run_ids[0])).status == "completed"
        assert "Traceback" not in worker.log(), worker.log()


@pytest.fixture
def web_and_task_workers(tmp_path: Path) -> Iterator[tuple[Worker, list[TaskWorker]]]:
    """A daphne web worker whose runs are tasks, and two db_workers that execute them,
    on the test database and one channel prefix in the test run's Redis."""
    require_redis()
    env = worker_settings(new_prefix("follow"))
    web = Worker(worker_env(**env), tmp_path / "web.log")
    try:
        web.spawn()
        with db_workers(tmp_path, 2, **env) as task_workers:
            web.wait_until_serving()
            yield web, task_workers
    finally:
        web.close()


async def _until(tab: LiveSocket, kinds: set[str], frames: list[dict[str, Any]]) -> None:
    while True:
        frame = await tab.frame(timeout=15)
        frames.append(frame)
        if frame["type"] in kinds:
            return


@pytest.mark.redis
def test_a_tab_follows_a_run_on_a_task_worker_and_stops_it(web_and_task_workers, make_user):
    web, task_workers = web_and_task_workers
    cookie = login_cookie(make_user("alice")).decode()
    text = "Hello from a tab"

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
        tab = await LiveSocket.open(web.port, "followed", cookie)
        try:
            assert (await tab.frame())["type"] == "history"
            await tab.say(text)
            completed: list[dict[str, Any]] = []
            await _until(tab, TERMINAL, completed)
            await tab.say(LONG)
            stopped: list[dict[str, Any]] = []
            await _until(tab, {"text.delta"}, stopped)
            await tab.connection.send(json.dumps({"type": "cancel"}))
            asked = time.monotonic()
            await _until(tab, TERMINAL, stopped)
            return completed, stopped, time.monotonic() - asked
        finally:
            await tab.close()

    completed, stopped, latency = asyncio.run(scenario())
    print(f"MEASURED Stop from the tab to run.cancelled: {latency * 1000:.0f} ms")
    kinds = [f["type"] for f in completed]
    assert kinds[0] == "run.started" and kinds[-1] == "run.completed", kinds
    streamed = "".join(f["delta"] for f in completed if f["type"] == "text.delta")
    items = [SessionItem.objects.filter(session__session_id="followed").order_by("id")]
    stored = [row.data for row in items[0]]
    assert streamed == reply_of(stored[:2]) == f"You said: {text}"
    assert stopped[-1]["type"] == "run.cancelled", [f["type"] for f in stopped]
    assert latency < 2.0
    runs = AgentRun.objects.filter(session__session_id="followed").order_by("id")
    assert [(r.status, r.error_code) for r in runs] == [("completed", ""), ("cancelled", "")]
    for run in runs:  # executed by the task workers, not the web worker
        order = RunOrder.objects.get(run=run)
        assert (order.origin, order.claimed) == ("tab", 1)
        assert any(w.owns(order.claimed_by) for w in task_workers), order.claimed_by
    logs = web.log() + "".join(w.log() for w in task_workers)
    assert "Traceback" not in logs, logs
