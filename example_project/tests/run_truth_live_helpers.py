"""The stack of the run-truth tests: two daphne workers of the example project on a
PostgreSQL cluster and a Redis server of their own, a fresh user for each test, and ways
to look at its runs and wait for what they do."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from example_project.tests.live import LiveSocket, log_in
from example_project.tests.servers import (
    DaphneServer,
    create_user,
    server_environment,
    start_all,
    start_migrated_postgres,
)
from tests.services import PostgresServer, RedisServer

LEASE = 6  # RUN_LEASE_SECONDS of the workers: a lost worker is noticed within about this


class Stack:
    def __init__(self, postgres: PostgresServer, redis: RedisServer, env: dict[str, str]):
        self.postgres, self.redis, self.env = postgres, redis, env
        self.workers: list[DaphneServer] = []
        self.user: tuple[str, str] = ("", "")
        self.cookie = ""

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.env["DATABASE_URL"], autocommit=True) as connection:
            return connection.execute(sql.encode(), params).fetchall()

    def socket(self, worker: int, session_id: str) -> LiveSocket:
        return LiveSocket(self.workers[worker].url, session_id, self.cookie)

    def ensure_running(self) -> None:
        for worker in self.workers:
            if worker.process is None or worker.process.poll() is not None:
                worker.start()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, log_dir: Path) -> Iterator[Stack]:
    base = tmp_path_factory.mktemp("run-truth")
    postgres = PostgresServer()
    redis = RedisServer(base / "redis")
    workers: list[DaphneServer] = []
    try:
        redis.start()
        env = server_environment(
            start_migrated_postgres(postgres),
            REDIS_URL=redis.url,
            CHANNEL_LAYER_PREFIX=f"truth-{uuid.uuid4().hex[:8]}:",
            CONN_MAX_AGE="600",  # the documented production settings
            RUN_LEASE_SECONDS=str(LEASE),
            CONTINUE_RUNS_AFTER_DISCONNECT="0",
            RATE_LIMIT="6/d",  # a fixed window: a day is never crossed mid-test
            DEMO_MODEL_DELAY="0.01",
        )
        result = Stack(postgres, redis, env)
        workers = [DaphneServer(f"truth-{n}", log_dir, env) for n in (1, 2)]
        result.workers = workers
        start_all(workers)
        result.user = create_user(env)
        result.cookie = log_in(workers[0].url, result.user)
        yield result
    finally:
        for worker in workers:
            worker.close()
        redis.stop()
        postgres.stop()


@pytest.fixture
def live(stack: Stack) -> Stack:
    stack.ensure_running()
    # Each test starts with a fresh rate-limit window of its own user.
    stack.user = create_user(stack.env)
    stack.cookie = log_in(stack.workers[0].url, stack.user)
    return stack


def new_id() -> str:
    return uuid.uuid4().hex


def run_status(stack: Stack, run_id: str) -> tuple[str, str]:
    rows = stack.query(
        "SELECT status, error FROM django_agent_sessions_agentrun WHERE run_id = %s",
        uuid.UUID(run_id),
    )
    assert rows, run_id
    return rows[0][0], rows[0][1]


def read_lines(stream: Any, lines: list[str]) -> None:
    """Append each line of ``stream`` as it comes, until it ends."""
    for line in stream:
        lines.append(line)


async def wait_for(condition: Any, timeout: float, poll: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(poll)
    return bool(condition())
