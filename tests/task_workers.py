"""Task worker processes of the test suite, for tests of runs as tasks
(``AGENT_SESSIONS["RUNS"] = "tasks"``): ``db_worker`` processes of django-tasks-db and
Celery workers, on the test run's database (and Redis), with the settings a test gives
them (``tests/settings.py`` reads them from the environment).

A worker is told apart by its pid: a run's ``RunOrder.claimed_by`` is
``"<host>:<pid>"`` of the process whose run host claimed it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions.models import AgentRun, RunOrder, SessionItem
from tests.processes import REPO_ROOT, worker_env

# What a db_worker prints once it polls its queue (verbosity 1).
_STARTED = "Starting worker"


def require_redis() -> str:
    """The test run's Redis; a missing one fails the test (bin/test starts it)."""
    url = os.environ.get("REDIS_URL")
    if not url:
        pytest.fail("REDIS_URL is not set: run bin/test, which starts Redis.")
    return url


class TaskWorker:
    """One task worker process, its output in ``log_path``."""

    def __init__(self, command: list[str], env: dict[str, str], log_path: Path) -> None:
        self.command, self.env, self.log_path = command, env, log_path
        self.process: subprocess.Popen[bytes] | None = None

    def spawn(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command, env=self.env, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT
            )

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def owns(self, claimed_by: str) -> bool:
        """Whether a run order's ``claimed_by`` names this process."""
        return claimed_by.rpartition(":")[2] == str(self.pid)

    def wait_for_log(self, text: str, timeout: float = 60) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while text not in self.log():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the worker did not say {text!r}:\n{self.log()}")
            time.sleep(0.05)

    def signal(self, number: int) -> None:
        assert self.process is not None
        self.process.send_signal(number)

    def wait(self, timeout: float) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        """Kill the worker at once (a graceful stop is tested where a test stops one)."""
        if self.alive():
            assert self.process is not None
            self.process.kill()
            self.process.wait(timeout=15)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def db_worker(
    log_path: Path, *, backend: str, env: dict[str, str], interval: float = 0.1
) -> TaskWorker:
    """A ``db_worker`` of the database task backend ``backend`` (not started)."""
    command = [
        *(sys.executable, "-m", "django", "db_worker", "--backend", backend),
        *("--interval", str(interval), "--no-startup-delay", "--no-reload", "-v", "1"),
    ]
    return TaskWorker(command, worker_env(**env), log_path)


@contextmanager
def db_workers(log_dir: Path, count: int = 2, **env: str) -> Iterator[list[TaskWorker]]:
    """``count`` db_workers of the ``database`` alias, each polling its queue; killed on
    the way out."""
    started = [
        db_worker(log_dir / f"db-worker-{n}.log", backend="database", env=env) for n in range(count)
    ]
    try:
        for worker in started:  # all at once: each takes a second or two to import
            worker.spawn()
        for worker in started:
            worker.wait_for_log(_STARTED)
        yield started
    finally:
        for worker in started:
            worker.close()


@contextmanager
def celery_worker(log_path: Path, **env: str) -> Iterator[TaskWorker]:
    """A Celery worker (threads pool) of ``tests.task_backends.celery_runs`` on the test
    run's Redis, under the test process's key prefix, with the ``celery`` alias of
    ``TASKS``; ready once it consumes its queue. Stopped with Celery's warm shutdown on
    the way out (killed if it takes too long)."""
    require_redis()
    from tests.task_backends.celery_runs import PREFIX

    command = [
        *(sys.executable, "-m", "celery", "-A", "tests.task_backends.celery_runs", "worker"),
        *("--pool=threads", "--concurrency=2", "--loglevel=info", "-n", f"{PREFIX}@%h"),
        *("--without-gossip", "--without-mingle", "--without-heartbeat"),
    ]
    env.update(AGENT_SESSIONS_CELERY_PREFIX=PREFIX, AGENT_SESSIONS_TEST_CELERY_RUNS="1")
    worker = TaskWorker(command, worker_env(**env), log_path)
    worker.spawn()
    try:
        worker.wait_for_log(" ready.")
        yield worker
    finally:
        if worker.alive():
            worker.signal(signal.SIGTERM)
            try:
                worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                worker.close()


# Runs executed by task workers, seen from the test's database.


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


@sync_to_async
def db_task_status(result_id: str) -> str:
    """The status of a task of the database backend once it ended (bounded)."""
    from django_tasks_db.models import DBTaskResult

    deadline = time.monotonic() + 10
    while True:
        status = str(DBTaskResult.objects.get(id=result_id).status)
        if status in ("SUCCESSFUL", "FAILED") or time.monotonic() > deadline:
            return status
        time.sleep(0.05)
