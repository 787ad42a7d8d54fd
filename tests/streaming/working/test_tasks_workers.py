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
from django.db import connection
from django.test import override_settings
from django.utils.module_loading import import_string

from django_agent_sessions import start_run
from django_agent_sessions.models import AgentRun, RunOrder, SessionItem
from django_agent_sessions.streaming.running.dispatch import RUN_TASK
from django_agent_sessions.task_backends.celery import TASK_NAME
from tests import settings as test_settings
from tests.daphne_workers import Worker
from tests.live_clients import frames_until, open_tab, stop_from
from tests.processes import worker_env
from tests.task_workers import (
    TaskWorker,
    assert_valid,
    celery_worker,
    claimed,
    claimer,
    db_task_status,
    db_workers,
    ended,
    history,
    reply_of,
    require_redis,
)
from tests.websockets import login_cookie

# Worker processes of a task backend: bin/test --full only (docs/tasks.md, "Tests").
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.full, pytest.mark.long(45)]

AGENT = "tests.chat_agent.make_demo_agent"
# A lease renewed every second (a third of it): a healthy run keeps it even when the
# suite's other passes starve these workers of CPU and SQLite's write lock for a while.
LEASE_SECONDS = 3
SWEEP_EVERY = LEASE_SECONDS / 4  # min(SWEEP_SECONDS, RUN_LEASE_SECONDS / 4)
DRAIN_SECONDS = 2.0
RUNS_PER_WORKER = 2
# The demo agent echoes a message in 3-character tokens 10 ms apart ("You said: ..."),
# and writes for about ten seconds when asked for something "long".
LONG = "tell me a long story"
LONG_WEATHER = "the long weather report"  # its tool first, then about ten seconds
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
        run_id = await start_run("killed", LONG_WEATHER)
    victim = claimer(await claimed(run_id), workers)
    [survivor] = [w for w in workers if w is not victim]
    await asyncio.sleep(0.5)  # its tool called, writing its reply
    victim.signal(signal.SIGKILL)
    killed = time.monotonic()
    run = await ended(run_id, timeout=LEASE_SECONDS + 10)
    detected = time.monotonic() - killed
    print(f"MEASURED worker_lost {detected:.2f}s after SIGKILL (lease {LEASE_SECONDS}s)")
    assert (run.status, run.error_code) == ("failed", "worker_lost")
    # The lease, then at most one sweep of the other worker, and its hops.
    assert detected < LEASE_SECONDS + SWEEP_EVERY + 1.5
    items = await history("killed")
    assert_valid(items, LONG_WEATHER)
    assert "function_call" in [i.get("type") for i in items]  # its tool was called

    # The task delivered again (a redelivery after its worker died): nothing runs.
    result = await import_string(RUN_TASK).using(backend="database").aenqueue(run_id, 1)
    survivor.wait_for_log(f"Run {run_id} execution 1 was taken or has ended", timeout=15)
    assert (await db_task_status(result.id)) == "SUCCESSFUL"
    again = await AgentRun.objects.aget(run_id=run_id)
    assert (again.status, again.event_seq) == ("failed", run.event_seq)
    assert await history("killed") == items
    order = await RunOrder.objects.aget(run__run_id=run_id)
    assert order.claimed == 1
    assert victim.owns(order.claimed_by)
    assert "Traceback" not in survivor.log()


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
    assert "Drained." in log, log
    assert "Traceback" not in log, log


@pytest.mark.redis
async def test_a_celery_worker_runs_runs_once(tmp_path, settings):
    require_redis()
    from tests.task_backends.celery_runs import app

    settings.TASKS = {**settings.TASKS, "celery": test_settings.CELERY_RUNS}
    env = worker_settings(new_prefix("celery"), RUNS_BACKEND="celery")
    with celery_worker(tmp_path / "celery.log", **env) as worker:
        texts = ["Hello Celery", "Hello again Celery"]
        with override_settings(AGENT_SESSIONS={**HERE, "RUNS_BACKEND": "celery"}):
            run_ids = [await start_run(f"celery-{n}", text) for n, text in enumerate(texts)]
        for n, (run_id, text) in enumerate(zip(run_ids, texts, strict=True)):
            run = await ended(run_id)
            assert (run.status, run.error_code) == ("completed", "")
            assert reply_of(await history(f"celery-{n}")) == f"You said: {text}"

        # The same task delivered a second time (acks_late, a redelivery): nothing runs.
        before = await history("celery-0")
        sent = app.send_task(TASK_NAME, args=(RUN_TASK, [run_ids[0], 1], {}, "celery"))
        assert await asyncio.to_thread(sent.get, timeout=20) is None
        worker.wait_for_log(f"Run {run_ids[0]} execution 1 was taken or has ended", timeout=15)
        assert await history("celery-0") == before
        assert (await AgentRun.objects.aget(run_id=run_ids[0])).status == "completed"
        assert "Traceback" not in worker.log(), worker.log()


# How a tab follows a run that a task worker executes: a websocket over the Redis channel
# layer, or an HTTP event stream over PostgreSQL's LISTEN/NOTIFY (no Channels layer).
TRANSPORTS = [
    pytest.param("websocket", marks=pytest.mark.redis),
    pytest.param("sse", id="sse-postgresql"),
]


@pytest.fixture(params=TRANSPORTS)
def web_and_task_workers(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, Worker, list[TaskWorker]]]:
    """A daphne web worker whose runs are tasks, and two db_workers that execute them,
    on the test database and one way between them (see ``TRANSPORTS``)."""
    transport = request.param
    env = worker_settings(new_prefix("follow"))
    if transport == "websocket":
        require_redis()
    elif connection.vendor != "postgresql":
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's: on SQLite, streams meet runs in Redis")
    else:
        env["AGENT_SESSIONS_TEST_NO_CHANNEL_LAYERS"] = "1"
    web = Worker(worker_env(**env), tmp_path / "web.log")
    try:
        web.spawn()
        with db_workers(tmp_path, 2, **env) as task_workers:
            web.wait_until_serving()
            yield transport, web, task_workers
    finally:
        web.close()


def test_a_tab_follows_a_run_on_a_task_worker_and_stops_it(web_and_task_workers, make_user):
    transport, web, task_workers = web_and_task_workers
    cookie = login_cookie(make_user("alice")).decode()
    text = "Hello from a tab"

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
        tab = await open_tab(transport, web.port, "followed", cookie)
        try:
            assert (await tab.frame())["type"] == "history"
            await tab.say(text)
            completed: list[dict[str, Any]] = []
            await frames_until(tab, TERMINAL, completed)
            await tab.say(LONG)
            stopped: list[dict[str, Any]] = []
            await frames_until(tab, {"text.delta"}, stopped)
            await stop_from(tab)
            asked = time.monotonic()
            await frames_until(tab, TERMINAL, stopped)
            return completed, stopped, time.monotonic() - asked
        finally:
            await tab.close()

    completed, stopped, latency = asyncio.run(scenario())
    print(f"MEASURED {transport}: Stop to run.cancelled in {latency * 1000:.0f} ms")
    kinds = [f["type"] for f in completed]
    assert (kinds[0], kinds[-1]) == ("run.started", "run.completed"), kinds
    streamed = "".join(f["delta"] for f in completed if f["type"] == "text.delta")
    rows = SessionItem.objects.filter(session__session_id="followed").order_by("id")
    stored = [row.data for row in rows]
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
