"""A live server for the tests that drive AG-UI's own client (in Node, in Chromium):
daphne serving the test project, its demo agent a real Runner on a scripted model, and
the client's packages where ``bin/test`` installed them (``npm ci`` of the committed
``client/package-lock.json`` into ``.cache/ag-ui-client``)."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.daphne_workers import Worker
from tests.processes import REPO_ROOT, worker_env

CLIENT_DIR = REPO_ROOT / "tests" / "protocols" / "ag_ui" / "client"
MODULES = REPO_ROOT / ".cache" / "ag-ui-client"
CSRF = "c" * 32


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: Any) -> Iterator[Worker]:
    """One daphne for the module's tests (each test's users and rows are its own)."""
    if not (MODULES / "node_modules" / "@ag-ui" / "client").is_dir():
        pytest.fail(f"@ag-ui/client is not installed in {MODULES}: run bin/test")
    if shutil.which("node") is None:
        pytest.fail("Node is not installed")
    with django_db_blocker.unblock():
        env = worker_env(
            AGENT_SESSIONS_TEST_AGENT="tests.chat_agent.make_demo_agent",
            AGENT_SESSIONS_CHANNEL_PREFIX=f"agui-{uuid.uuid4().hex[:8]}:",
            # Deltas flushed as the model writes them (10 ms apart): the pieces are seen.
            AGENT_SESSIONS_TEST_SETTINGS=json.dumps({"DELTA_FLUSH_SECONDS": 0.005}),
        )
    worker = Worker(env, tmp_path_factory.mktemp("ag-ui") / "daphne.log")
    try:
        worker.start()
        yield worker
    finally:
        worker.close()


def cookie(session_cookie: bytes) -> str:
    """The ``Cookie`` header of a signed-in client with a CSRF token."""
    return f"csrftoken={CSRF}; {session_cookie.decode()}"
