"""``paused`` under the newest ``openai-agents`` the project allows: the runs the oldest
supported release stored (tests/fixtures/run_states) resume under it.

The suite's virtualenv has one release; this runs ``test_paused_stored_states.py`` in a
second one, under ``.cache/sdk-newest/``, where uv installs the project from this checkout
with its test group and resolves ``openai-agents`` to the highest release the range in
pyproject.toml allows. The virtualenv is kept between runs (a run that changes nothing
takes seconds); ``--upgrade-package openai-agents`` asks the index again each time, so a
new release in the range is tested on the first run after it appears.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from filelock import FileLock
from packaging.version import Version

from tests.checkout import REPO_ROOT

# About 20 s on the 2-core machine: most of it the second pytest starting Django.
pytestmark = [pytest.mark.once, pytest.mark.long(20)]

MODULE = "tests/streaming/running/test_paused_stored_states.py"
VENV = REPO_ROOT / ".cache" / "sdk-newest" / f"py{sys.version_info[0]}.{sys.version_info[1]}"
# What the suite's pass installs (bin/test), less the example project's extra.
EXTRAS = "websocket,postgres,redis"
# A first build downloads what uv's cache lacks; later runs take a few seconds.
INSTALL_TIMEOUT = 240


def _uv(*args: str) -> None:
    uv = Path(sys.executable).with_name("uv")
    done = subprocess.run(
        [str(uv), *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"uv {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"


def newest_sdk_python() -> Path:
    """The Python of the virtualenv with the newest allowed ``openai-agents``."""
    python = VENV / "bin" / "python"
    VENV.parent.mkdir(parents=True, exist_ok=True)
    # One run at a time builds it (xdist workers, runs of two checkouts' worth of shells).
    with FileLock(str(VENV) + ".lock"):
        if not python.exists():
            _uv("venv", "-q", "--python", sys.executable, str(VENV))
        _uv(
            "pip",
            "install",
            "-q",
            "--python",
            str(python),
            "-e",
            f".[{EXTRAS}]",
            "--group",
            "test",
            "--upgrade-package",
            "openai-agents",
        )
    return python


def test_runs_stored_by_the_oldest_sdk_resume_under_the_newest_allowed() -> None:
    python = newest_sdk_python()
    newest = subprocess.run(
        [
            str(python),
            "-c",
            "from importlib.metadata import version as v; print(v('openai-agents'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Highest resolution: never older than the release the suite's virtualenv has.
    assert Version(newest) >= Version(version("openai-agents"))
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", MODULE],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = f"openai-agents {newest}:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, report
    assert " passed" in done.stdout, report
    assert "skipped" not in done.stdout, report
