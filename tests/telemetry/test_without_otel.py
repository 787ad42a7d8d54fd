"""Without OpenTelemetry (the ``otel`` extra not installed): the app imports, runs and
stores as ever, and every telemetry call is the shared do-nothing span."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Its own SQLite file whatever the pass's database: run once per bin/test.
pytestmark = pytest.mark.once

ROOT = Path(__file__).resolve().parent.parent.parent


def test_a_run_works_when_opentelemetry_cannot_be_imported(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")  # the in-memory layer
    }
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings",
        AGENT_SESSIONS_TEST_DB="sqlite",
        AGENT_SESSIONS_DB_NAME=str(tmp_path / "without-otel.sqlite3"),
        PYTHONPATH=str(ROOT),
    )
    result = subprocess.run(
        [sys.executable, "-m", "tests.telemetry.without_otel"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "otel": False,
        "active": False,
        "no_span": True,
        "run_config": False,
        "status": "completed",
        "trace_id": "",
        "items": 2,
    }
