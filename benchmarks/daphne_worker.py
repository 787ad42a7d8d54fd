"""One daphne worker serving ``benchmarks.streaming_asgi``, and websockets to it.

Used by the streaming benchmark's clients; every wait here is bounded.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
IDLE_SECONDS = 60  # the longest a round's runs may take to record their ends


class Server:
    """One daphne worker serving ``benchmarks.streaming_asgi``."""

    def __init__(self, db: str, db_name: str, no_session: bool) -> None:
        self.port = free_port()
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "benchmarks.streaming_settings",
            "BENCH_DB": db,
            "BENCH_DB_NAME": db_name,
            "BENCH_NO_SESSION": "1" if no_session else "0",
            "PYTHONPATH": str(ROOT),
        }
        self.process: subprocess.Popen[bytes] | None = None

    def prepare(self, users: int) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.streaming_app", str(users)],
            env=self.env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        return list(json.loads(out.stdout))

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "daphne",
                "-b",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-v",
                "0",
                "benchmarks.streaming_asgi:application",
            ],
            env=self.env,
            cwd=ROOT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("daphne did not start listening within 30 s")

    def rss(self) -> int:
        assert self.process is not None
        return int(psutil.Process(self.process.pid).memory_info().rss)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def open_socket(server: Server, cookie: str, session_id: str, **kwargs: Any) -> Any:
    return connect(
        f"ws://127.0.0.1:{server.port}/ws/agent-sessions/{session_id}/",
        origin=f"http://127.0.0.1:{server.port}",  # type: ignore[arg-type]
        additional_headers={"Cookie": f"sessionid={cookie}"},
        max_size=2**22,
        open_timeout=30,
        **kwargs,
    )


def when_idle(port: int, route: str) -> None:
    """POST ``route`` to the worker on ``port`` once its runs have ended: a route of
    ``settling`` or ``setting_switch``, which answers 409 while runs are running."""
    url = f"http://127.0.0.1:{port}{route}"
    deadline = time.monotonic() + IDLE_SECONDS
    while True:
        try:
            urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=10)
            return
        except urllib.error.HTTPError as error:
            if error.code != 409 or time.monotonic() > deadline:
                raise
        time.sleep(0.05)  # polling the worker's own count of its runs, bounded above
