"""One deployment of the runs-as-tasks benchmark: a daphne web worker, and the task
worker that executes its runs (none for inline runs), on 127.0.0.1.

- ``database``: ``python -m django db_worker --interval <s>`` (django-tasks-db), which
  polls its queue table every ``interval`` seconds when it found nothing;
- ``celery``: ``celery -A benchmarks.tasks_celery worker --pool=threads`` with the broker
  in Redis, as docs/tasks-celery.md runs it.

Each task hands its run to the process's run host (``streaming.working.host``) and
returns, so one task worker process holds every run of a burst on one event loop.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import psutil

from benchmarks.daphne_worker import ROOT, Server

DB_WORKER_INTERVAL = 0.05  # seconds between the db_worker's polls of an empty queue
CELERY_POOL = ("--pool=threads", "--concurrency=8")
RUNS_TABLE = "django_agent_sessions_agentrun"
ORDERS_TABLE = "django_agent_sessions_runorder"


@dataclass(frozen=True)
class Mode:
    label: str
    runs: str  # inline | database | celery


INLINE = Mode("inline", "inline")
DATABASE = Mode("tasks, database", "database")
CELERY = Mode("tasks, Celery", "celery")
MODES = (INLINE, DATABASE, CELERY)


class Deployment:
    """A mode's web worker and task worker, alive for the whole benchmark."""

    def __init__(self, mode: Mode, db: str, db_name: str, interval: float) -> None:
        self.mode = mode
        self.interval = interval
        self.server = Server(db, db_name, False)
        prefix = f"bench-{mode.runs}-{os.getpid()}"
        self.server.env.update(
            DJANGO_SETTINGS_MODULE="benchmarks.tasks_settings",
            BENCH_RUNS=mode.runs,
            CHANNEL_LAYER_PREFIX=prefix,
            BENCH_CELERY_PREFIX=f"{prefix}-celery:",
            CONN_MAX_AGE="",  # the example's persistent connections
        )
        self.worker: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        return self.server.env

    def command(self) -> list[str] | None:
        """The task worker's command line; None for inline runs."""
        if self.mode.runs == "database":
            return [
                *(sys.executable, "-m", "django", "db_worker"),
                *("--interval", str(self.interval), "--no-startup-delay", "--no-reload"),
                *("--worker-id", f"bench-db-{os.getpid()}", "-v", "0"),
            ]
        if self.mode.runs == "celery":
            return [
                *(
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "benchmarks.tasks_celery",
                    "--quiet",
                    "worker",
                ),
                *CELERY_POOL,
                *("--loglevel=warning", "-n", f"bench-{os.getpid()}@%h"),
                *("--without-gossip", "--without-mingle", "--without-heartbeat"),
            ]
        return None

    def start(self) -> None:
        self.server.start()
        command = self.command()
        if command is not None:
            self.worker = subprocess.Popen(command, env=self.env, cwd=ROOT)
            time.sleep(1.0)
            if self.worker.poll() is not None:
                raise RuntimeError(f"{self.mode.label}: the task worker exited at start")

    def processes(self) -> dict[str, psutil.Process]:
        """``web`` and, for runs as tasks, ``task worker``."""
        assert self.server.process is not None
        found = {"web": psutil.Process(self.server.process.pid)}
        if self.worker is not None:
            found["task worker"] = psutil.Process(self.worker.pid)
        return found

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.terminate()  # both drain their runs (none are left) and exit
            try:
                self.worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                self.worker.wait()
        self.server.stop()


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def describe(interval: float, claim_ahead: int | None, layer: str) -> dict[str, Any]:
    """How the task workers run, for the report."""
    return {
        "channel_layer": f"channels_redis ({layer})",
        "db_worker": f"python -m django db_worker --interval {interval} --no-startup-delay",
        "celery": "celery worker " + " ".join(CELERY_POOL) + ", broker: Redis",
        "runs_per_worker": 200,
        "runs_claim_ahead": "the default" if claim_ahead is None else claim_ahead,
    }
