"""One wheelhouse per test run for the tests that install into a new virtual environment.

Those tests (the guides' install blocks, ``bin/run``) run ``pip install`` exactly as
written; what pip spends there is mostly asking the package index about every
dependency (about 20 s of a 36 s install here). So the run asks once: the first test
that needs it builds every wheel the project's extras and the guides name, resolved
from the index by the project's own ``pyproject.toml``, and each install reads them
offline (``PIP_NO_INDEX``, ``PIP_FIND_LINKS``: what a user's ``pip.conf`` pointing at
a local mirror does). A dependency missing from ``pyproject.toml`` still fails the
install: the wheelhouse holds the dependencies of what is declared, nothing else.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from tests.checkout import REPO_ROOT

# What the guides install beside the project (docs/plain-asgi.md: uvicorn), and the build
# backend pip needs to build the project from a checkout (editables: for bin/run's
# editable install).
EXTRAS = "websocket,postgres,redis,example"
ALSO_INSTALLED = ("uvicorn", "hatchling", "editables")
BUILD_TIMEOUT = 600


@pytest.fixture(scope="session")
def offline_pip(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment variables that make ``pip install`` read the run's wheelhouse."""
    # The base directory's parent is shared by every xdist worker of one run.
    root = tmp_path_factory.getbasetemp().parent
    house = root / "wheelhouse"
    with FileLock(str(root / "wheelhouse.lock")):
        if not (house / ".complete").exists():
            _build(house)
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(house)}


def _build(house: Path) -> None:
    wanted = [f"{REPO_ROOT}[{EXTRAS}]", *ALSO_INSTALLED]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--disable-pip-version-check",
            "-w",
            str(house),
            *wanted,
        ],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"building the wheelhouse failed:\n{done.stderr}"
    # The project itself is installed from the checkout under test, never from here.
    for own in house.glob("django_agent_sessions-*.whl"):
        own.unlink()
    (house / ".complete").touch()
