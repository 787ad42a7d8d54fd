"""Worker processes that share the test run's database, for cross-process tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.db import connection

REPO_ROOT = Path(__file__).resolve().parent.parent


def worker_env(**extra: str) -> dict[str, str]:
    """The environment of a process that uses this test run's settings and database."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "AGENT_SESSIONS_DB_NAME": str(connection.settings_dict["NAME"]),
        "PYTHONPATH": str(REPO_ROOT),
        **extra,
    }


def json_lists_from(script: str, *args: str, processes: int) -> list[Any]:
    """Runs ``python -c script args`` in ``processes`` processes at once; each prints a
    JSON list. Returns the lists joined; a failed process fails the test with its stderr."""
    started = [
        subprocess.Popen(
            [sys.executable, "-c", script, *args],
            env=worker_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
        )
        for _ in range(processes)
    ]
    joined: list[Any] = []
    for process in started:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        joined.extend(json.loads(out))
    return joined
