"""The Celery task backend against a real Celery worker process (threads pool) and the
test run's Redis: what is enqueued runs once in the worker, with its arguments; async
task functions run; anything but a framework Task is refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from django_agent_sessions import task_backends as framework
from django_agent_sessions.task_backends.celery import TASK_NAME, CeleryBackend, load_task
from tests.processes import REPO_ROOT, worker_env
from tests.task_backends import celery_app, celery_tasks

pytestmark = [pytest.mark.redis, pytest.mark.usefixtures("celery_tasks_settings")]

BACKEND = "django_agent_sessions.task_backends.celery.CeleryBackend"
APP = "tests.task_backends.celery_app.app"


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[bytes]]:
    """A Celery worker on a key prefix of its own in the test run's Redis."""
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        if os.environ.get("CI"):
            pytest.fail("REDIS_URL is not set: CI must run the Celery backend tests")
        pytest.skip("REDIS_URL is not set (bin/test starts Redis and sets it)")
    token = uuid.uuid4().hex[:8]
    prefix = f"agent-sessions-celery-{token}:"
    celery_app.configure(redis_url, prefix)
    log = tmp_path_factory.mktemp("celery") / "worker.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "celery", "-A", "tests.task_backends.celery_app"),
                *("worker", "--pool=threads", "--concurrency=2", "--loglevel=warning"),
                *("-Q", f"celery,{celery_app.OTHER_QUEUE}", "-n", f"tests-{token}@%h"),
                *("--without-gossip", "--without-mingle", "--without-heartbeat"),
            ],
            env=worker_env(AGENT_SESSIONS_CELERY_PREFIX=prefix),
            cwd=REPO_ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    process.log = log  # type: ignore[attr-defined]
    try:
        yield process
    finally:
        process.terminate()  # Celery's warm shutdown
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def celery_tasks_settings(settings: Any) -> None:
    framework.submodule("signals")  # its receiver drops the backends cached for TASKS
    settings.TASKS = {
        "default": {
            "BACKEND": BACKEND,
            "QUEUES": ["default", celery_app.OTHER_QUEUE],
            "OPTIONS": {"APP": APP},
        }
    }


@pytest.fixture
def read_marker(
    worker: subprocess.Popen[bytes], tmp_path: Path
) -> Callable[..., list[dict[str, Any]]]:
    """Waits (at most ``timeout`` seconds) until the marker file holds ``lines`` lines,
    failing at once if the worker died; returns them."""

    def read(lines: int, timeout: float = 30) -> list[dict[str, Any]]:
        marker = tmp_path / "marker.jsonl"
        deadline = time.monotonic() + timeout
        while True:
            found = marker.read_text().splitlines() if marker.exists() else []
            if len(found) >= lines:
                return [json.loads(line) for line in found]
            if worker.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"marker lines {found}; worker log:\n{worker.log.read_text()}")  # type: ignore[attr-defined]
            time.sleep(0.05)

    return read


def test_an_enqueued_task_runs_once_in_the_worker_with_its_arguments(tmp_path, read_marker):
    path = str(tmp_path / "marker.jsonl")
    result = celery_tasks.record.enqueue(path, "one", "two", size=3)
    assert result.status == framework.base_module().TaskResultStatus.READY
    assert result.backend == "default"
    assert result.args == [path, "one", "two"]

    started, ran, finished = read_marker(3)
    del ran["at"]
    assert started == {"signal": "started", "status": "RUNNING", "id": result.id}
    assert ran == {"task": "record", "words": ["one", "two"], "fields": {"size": 3}, "django": True}
    assert finished == {"signal": "finished", "status": "SUCCESSFUL", "id": result.id}
    # Once: the message is gone; the Celery result says so once the task has ended.
    assert celery_app.app.AsyncResult(result.id).get(timeout=10) is None
    assert len(read_marker(3)) == 3


def test_an_async_task_function_runs(tmp_path, read_marker):
    path = str(tmp_path / "marker.jsonl")
    result = celery_tasks.arecord.enqueue(path, "awaited")
    assert read_marker(3)[1] == {"task": "arecord", "word": "awaited"}
    assert read_marker(3)[2]["id"] == result.id


def test_the_result_id_is_the_celery_task_id_a_context_task_sees(tmp_path, read_marker):
    result = celery_tasks.record_context.enqueue(str(tmp_path / "marker.jsonl"))
    assert read_marker(3)[1] == {"task": "record_context", "id": result.id}


def test_a_queue_by_name_and_run_after_reach_celery(tmp_path, read_marker):
    path = str(tmp_path / "marker.jsonl")
    run_after = timezone.now() + timedelta(seconds=1)
    deferred = celery_tasks.record.using(queue_name=celery_app.OTHER_QUEUE, run_after=run_after)
    deferred.enqueue(path, "later")
    ran = read_marker(3)[1]
    assert ran["words"] == ["later"]
    assert ran["at"] >= run_after.timestamp()  # the worker held the message until its eta


def test_a_failing_task_fails_in_celery_after_the_finished_signal(tmp_path, read_marker):
    result = celery_tasks.fail.enqueue(str(tmp_path / "marker.jsonl"))
    with pytest.raises(Exception, match="the task failed on purpose"):
        celery_app.app.AsyncResult(result.id).get(timeout=20)
    assert read_marker(3)[2] == {
        "signal": "finished",
        "status": "FAILED",
        "id": result.id,
        "error": "builtins.ValueError",
    }


def test_the_worker_refuses_a_module_path_that_is_not_a_task(tmp_path, worker):
    path = str(tmp_path / "marker.jsonl")
    sent = celery_app.app.send_task(
        TASK_NAME, args=("tests.task_backends.celery_tasks.not_a_task", [path], {}, "default")
    )
    with pytest.raises(Exception, match="is not a task of Django's Tasks framework"):
        sent.get(timeout=30)
    assert not Path(path).exists()  # the task has ended: the function never ran


def test_load_task_refuses_what_is_not_a_task():
    refused = framework.invalid_task_error()
    assert load_task("tests.task_backends.celery_tasks.record") is celery_tasks.record
    not_a_task = "tests.task_backends.celery_tasks.not_a_task"
    with pytest.raises(refused, match=re.escape(f"{not_a_task!r} is not a task")):
        load_task(not_a_task)
    with pytest.raises(refused, match=re.escape("'tests.task_backends.nowhere.record' cannot")):
        load_task("tests.task_backends.nowhere.record")


def test_priorities_are_refused_and_the_app_path_must_import(settings):
    with pytest.raises(framework.invalid_task_error(), match="priority"):
        celery_tasks.record.using(priority=5)
    backend = CeleryBackend("broken", {"OPTIONS": {"APP": "tests.task_backends.nowhere.app"}})
    with pytest.raises(Exception, match=r"\['APP'\] = 'tests.task_backends.nowhere.app'"):
        backend.enqueue(celery_tasks.record, ["unused"], {})


def test_without_celery_the_module_says_what_to_install():
    blocked = (
        "import sys; sys.modules['celery'] = None; "
        "import django_agent_sessions.task_backends.celery"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    ran = subprocess.run(
        [sys.executable, "-c", blocked], env=env, cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert ran.returncode == 1
    assert 'pip install "django-agent-sessions[celery]"' in ran.stderr
