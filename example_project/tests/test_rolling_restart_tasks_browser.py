"""A rolling restart of the web tier while runs execute on task workers, in Chromium.

The example project's production mode with ``RUNS=tasks``: two uvicorn web workers on one
listening socket, one ``db_worker`` task worker, PostgreSQL and Redis of this module's own.
The page asks for a long story; the story runs on the task worker. While it streams,
both web workers in turn get SIGTERM and are started again. The run is not touched: it
completes on the task worker, and the page, sent from worker to worker, ends showing the
stored story once, without a reload and without an error.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from example_project.tests.conftest import a_failed_reconnection
from example_project.tests.servers import (
    manage,
    query,
    server_environment,
    start_all,
    start_migrated_postgres,
)
from example_project.tests.tasks_tier import TaskWorker
from example_project.tests.test_e2e_browser import ASSISTANT, context, page, send  # noqa: F401
from example_project.tests.test_rolling_restart_browser import (
    SharedPortServer,
    story_through_a_rolling_restart,
)
from tests.browser import save_screenshot
from tests.services import PostgresServer, RedisServer

# Worker processes of a task backend: bin/test --full only (docs/tasks.md, "Tests").
pytestmark = [pytest.mark.redis, pytest.mark.full, pytest.mark.timeout(300), pytest.mark.long(40)]


@pytest.fixture(scope="module")
def tier(tmp_path_factory: pytest.TempPathFactory, log_dir: Path) -> Iterator[Any]:
    base = tmp_path_factory.mktemp("rolling-tasks")
    postgres, redis = PostgresServer(), RedisServer(base / "redis")
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    web: list[SharedPortServer] = []
    task_worker = None
    try:
        redis.start()
        env = server_environment(
            start_migrated_postgres(postgres),
            REDIS_URL=redis.url,
            CHANNEL_LAYER_PREFIX=f"rolling-tasks-{uuid.uuid4().hex[:8]}:",
            DEMO_MODEL_DELAY="0.01",
            RUNS="tasks",
        )
        manage(env, "migrate", "--no-input", "-v", "0")  # the task queue's table
        task_worker = TaskWorker(log_dir, env)
        task_worker.start()
        web = [SharedPortServer(f"rolling-tasks-{n}", log_dir, env, listener) for n in (1, 2)]
        start_all(web)
        yield web, task_worker
    finally:
        for server in web:
            server.stop()
        if task_worker is not None:
            task_worker.stop()
        listener.close()
        redis.stop()
        postgres.stop()


def test_a_rolling_restart_of_the_web_tier_touches_no_run(tier, page, console_problems):  # noqa: F811
    web, task_worker = tier
    first = web[0]
    story_through_a_rolling_restart(page, web, "rolling-restart-tasks")
    # The run ran on the task worker, once, and completed: no web worker's drain touched it.
    runs = query(
        first.env,
        "SELECT r.status, o.origin, o.claimed, o.claimed_by FROM django_agent_sessions_agentrun r"
        " JOIN django_agent_sessions_runorder o ON o.run_id = r.id",
    )
    assert [(status, origin, claimed) for status, origin, claimed, _by in runs] == [
        ("completed", "tab", 1)
    ]
    assert runs[0][3].endswith(f":{task_worker.process.pid}")
    save_screenshot(page, "rolling-restart-tasks-done")
    for process in (*web, task_worker):
        assert "Traceback" not in process.log(), process.log()
    console_problems[:] = [p for p in console_problems if not a_failed_reconnection(p)]
