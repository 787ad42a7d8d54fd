"""What the adapter's Node and browser tests share: the AI SDK's own client, installed
by ``bin/test`` from ``client/package-lock.json`` into ``.cache/ai-sdk-client``, built
with its esbuild, and a live server of the test application to run it against.

The server is a daphne worker (``tests.daphne_workers``) on the test run's database,
chatting with ``agent.make_agent``: "weather" calls a tool, "long" writes for a while.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.daphne_workers import Worker
from tests.processes import REPO_ROOT, worker_env
from tests.websockets import login_cookie

CLIENT_SOURCES = Path(__file__).resolve().parent / "client"
CLIENT_CACHE = REPO_ROOT / ".cache" / "ai-sdk-client"
NODE_MODULES = CLIENT_CACHE / "node_modules"
CSRF = "c" * 32
_T = TypeVar("_T")


def esbuild(entry: str, outdir: Path, *, platform: str) -> Path:
    """``client/<entry>`` bundled with its imports (from the cache's node_modules)."""
    binary = NODE_MODULES / ".bin" / "esbuild"
    if not binary.exists():
        # A missing client is a failure, never a skip: bin/test installs it.
        pytest.fail(f"The AI SDK client is not installed in {CLIENT_CACHE}; run bin/test.")
    out = outdir / Path(entry).with_suffix(".js").name
    args = [str(binary), str(CLIENT_SOURCES / entry), "--bundle", f"--outfile={out}"]
    args += [f"--platform={platform}", "--format=esm", "--log-level=warning"]
    if platform == "browser":
        args += ['--define:process.env.NODE_ENV="production"', "--minify", "--jsx=automatic"]
    env = {**os.environ, "NODE_PATH": str(NODE_MODULES)}
    subprocess.run(args, check=True, env=env, cwd=REPO_ROOT, timeout=60)
    return out


@pytest.fixture(scope="module")
def chat_server(django_db_setup: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    """One daphne worker of the test application for the module's tests. Runs go on
    after a disconnect: ``resume: true`` rejoins them after a reload (the page's Stop
    asks for the cancel)."""
    logs = tmp_path_factory.mktemp("ai-sdk-server")
    env = worker_env(
        AGENT_SESSIONS_TEST_AGENT="tests.protocols.ai_sdk.agent.make_agent",
        AGENT_SESSIONS_TEST_SETTINGS=json.dumps({"CONTINUE_RUNS_AFTER_DISCONNECT": True}),
    )
    worker = Worker(env, logs / "server.log")
    try:
        worker.start()
        yield worker
    finally:
        worker.close()


def cookie_of(user: Any) -> str:
    return login_cookie(user).decode()


def in_a_thread(work: Callable[..., _T], *args: Any) -> _T:
    """``work(*args)`` on a thread of its own: the database, from a test that drives a
    browser (Playwright's sync API runs an event loop in the test's thread, where
    Django refuses the ORM and asgiref refuses ``async_to_sync``)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(work, *args).result(timeout=60)


def signed_in(make_user: Callable[[str], Any], name: str) -> str:
    """A new user's session cookie value, made on a thread of its own."""
    return in_a_thread(lambda: cookie_of(make_user(name)).split("=", 1)[1])
