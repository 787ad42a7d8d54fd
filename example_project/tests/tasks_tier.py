"""The example project's production mode with runs as tasks (``RUNS=tasks``): web
workers that take messages and follow runs, ``db_worker`` task workers that execute them,
and a PostgreSQL server (and, for the websocket, a Redis server) of the tests' own, so
that the tests restart them and kill workers for real.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from example_project.tests.live import log_in
from example_project.tests.servers import (
    REPO_ROOT,
    DaphneServer,
    UvicornServer,
    create_user,
    manage,
    query,
    server_environment,
    start_all,
    start_migrated_postgres,
)
from tests.services import PostgresServer, RedisServer

LEASE = 3  # RUN_LEASE_SECONDS: a killed task worker's run is noticed within about this


class TaskWorker:
    """``manage.py db_worker``: the example project's task worker."""

    def __init__(self, log_dir: Path, env: dict[str, str], name: str = "db-worker") -> None:
        self.log_path, self.env = log_dir / f"{name}.log", env
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "db_worker", "--interval", "0.05"],
                cwd=REPO_ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        if self.running():
            assert self.process is not None
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)

    def kill(self) -> None:
        """SIGKILL: no drain, no end written; the run is left to the lease and the sweep."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=15)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class Tier:
    """Two web workers and two task workers on one database: ``transport`` is how tabs
    follow runs ("websocket": daphne and the Redis layer, channels_redis's core one or,
    deployed as "pubsub", its pub/sub one; "sse": uvicorn and PostgreSQL's LISTEN/NOTIFY,
    no Channels layer)."""

    def __init__(self, transport: str, postgres: PostgresServer, redis: RedisServer | None):
        self.transport, self.postgres, self.redis = transport, postgres, redis
        self.env: dict[str, str] = {}
        self.web: list[DaphneServer] = []
        self.tasks: list[TaskWorker] = []
        self.cookie = ""
        self._log_marks: list[int] = []

    def port(self, web: int) -> int:
        return self.web[web].port

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return query(self.env, sql, params)

    def ensure_running(self) -> None:
        for server in self.web:
            if server.process is None or server.process.poll() is not None:
                server.start()
        for worker in self.tasks:
            if not worker.running():
                worker.start()

    def logs(self) -> str:
        """What the tier's processes logged since ``mark_logs()`` (their logs are
        appended to, run after run)."""
        texts = [server.log() for server in self.web] + [worker.log() for worker in self.tasks]
        return "".join(text[start:] for text, start in zip(texts, self._log_marks, strict=False))

    def mark_logs(self) -> None:
        texts = [server.log() for server in self.web] + [worker.log() for worker in self.tasks]
        self._log_marks = [len(text) for text in texts]


def tier_environment(
    deployment: str, database_url: str, redis: RedisServer | None
) -> dict[str, str]:
    ways = (
        {"REDIS_URL": redis.url, "CHANNEL_LAYER_PREFIX": f"tier-{uuid.uuid4().hex[:8]}:"}
        if redis is not None
        else {"CHANNEL_LAYER": "none", "CHAT_TRANSPORT": "sse"}
    )
    if deployment == "pubsub":
        ways["CHANNEL_LAYER"] = "pubsub"
    return server_environment(
        database_url,
        RUNS="tasks",
        CONN_MAX_AGE="600",  # the documented production settings
        RUN_LEASE_SECONDS=str(LEASE),
        CONTINUE_RUNS_AFTER_DISCONNECT="1",
        RATE_LIMIT="1000/m",
        DEMO_MODEL_DELAY="0.01",
        **ways,
    )


# "pubsub": the websocket tier on channels_redis's pub/sub layer.
@pytest.fixture(scope="module", params=["websocket", "sse", "pubsub"])
def tasks_deployment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, log_dir: Path
) -> Iterator[Tier]:
    deployment: str = request.param
    transport = "sse" if deployment == "sse" else "websocket"
    base = tmp_path_factory.mktemp(f"tier-{deployment}")
    postgres = PostgresServer()
    redis = RedisServer(base / "redis") if transport == "websocket" else None
    result = Tier(transport, postgres, redis)
    try:
        if redis is not None:
            redis.start()
        result.env = tier_environment(deployment, start_migrated_postgres(postgres), redis)
        manage(result.env, "migrate", "--no-input", "-v", "0")  # the task queue's table
        result.tasks = [TaskWorker(log_dir, result.env, f"{deployment}-task-{n}") for n in (1, 2)]
        for worker in result.tasks:
            worker.start()
        server = DaphneServer if transport == "websocket" else UvicornServer
        result.web = [server(f"tier-{deployment}-{n}", log_dir, result.env) for n in (1, 2)]
        start_all(result.web)
        result.cookie = log_in(result.web[0].url, create_user(result.env))
        yield result
    finally:
        for web in result.web:
            web.close()
        for worker in result.tasks:
            worker.stop()
        if redis is not None:
            redis.stop()
        postgres.stop()


@pytest.fixture
def live_tier(tasks_deployment: Tier) -> Tier:
    tasks_deployment.ensure_running()
    tasks_deployment.mark_logs()
    return tasks_deployment
