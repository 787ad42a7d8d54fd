"""Worker processes that share the test run's database, for cross-process tests."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from django.db import connection

from tests import warm_start

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
    """Runs ``python -c script args`` in ``processes`` processes at once (started warm:
    ``tests/warm_start.py``); each prints a JSON list. Returns the lists joined; a failed
    process fails the test with its stderr."""
    with tempfile.TemporaryDirectory(prefix="json-lists-") as directory:
        files = [
            (Path(directory) / f"{n}.out", Path(directory) / f"{n}.err") for n in range(processes)
        ]
        started = [
            warm_start.start(
                ["-c", script, *args], env=worker_env(), cwd=REPO_ROOT, output=out, errors=err
            )
            for out, err in files
        ]
        joined: list[Any] = []
        for process, (out, err) in zip(started, files, strict=True):
            code = process.wait(timeout=120)
            assert code == 0, err.read_text() if err.exists() else f"exit status {code}"
            joined.extend(json.loads(out.read_text()))
        return joined
