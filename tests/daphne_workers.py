"""Worker processes of the test suite's ASGI application, for cross-worker tests.

Each worker serves ``tests.asgi:application`` with daphne (or, given ``command``, another
server and application) on a listening socket made before it starts (so its port is
known), with the environment it is given: the test run's database, and what the test
sets (its agent, its channel prefix, a lossy layer).
"""

from __future__ import annotations

import os
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests import warm_start
from tests.processes import REPO_ROOT, worker_env


class Worker:
    def __init__(self, env: dict[str, str], log_path: Any, command: tuple[str, ...] = ()) -> None:
        # ``command``: the server, run with ``--fd N`` after it; daphne's by default.
        self.command = command or ("-m", "daphne", "tests.asgi:application")
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.env, self.log_path = env, log_path
        self.process: warm_start.Process | None = None

    def start(self) -> None:
        self.spawn()
        self.wait_until_serving()

    def spawn(self) -> None:
        self.process = warm_start.start(
            [*self.command, "--fd", warm_start.LISTENER_FD],
            env=self.env,
            cwd=REPO_ROOT,
            output=Path(self.log_path),
            listener=self.listener,
        )

    def wait_until_serving(self) -> None:
        # The listening socket exists before daphne does: ask for a page until it answers.
        assert self.process is not None
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/admin/login/", timeout=5) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"the server did not start: {self.log()}")
            time.sleep(0.2)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=15)

    def close(self) -> None:
        """Stop the worker at once. Not gracefully: a graceful stop waits up to daphne's
        application close timeout (10 s) for the sockets and runs a test left, and what
        a graceful stop does is tested where a test stops a worker (``test_drain_live``)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=15)
        self.listener.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@contextmanager
def two_workers(
    log_dir: Path, *, command: tuple[str, ...] = (), **env: str
) -> Iterator[list[Worker]]:
    """Workers A and B on the test run's database and Redis, with ``env`` added (each
    test gives its own ``AGENT_SESSIONS_CHANNEL_PREFIX``); stopped on the way out."""
    if not os.environ.get("REDIS_URL"):
        pytest.fail("REDIS_URL is not set: run bin/test, which starts Redis.")
    started = [Worker(worker_env(**env), log_dir / f"worker-{name}.log", command) for name in "ab"]
    try:
        for worker in started:  # both at once: each takes seconds to import
            worker.spawn()
        for worker in started:
            worker.wait_until_serving()
        yield started
    finally:
        for worker in started:
            worker.close()
