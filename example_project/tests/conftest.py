"""Fixtures for the example project's tests: live daphne servers and logged-in pages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import set_tracing_disabled

from example_project.tests.servers import (
    DaphneServer,
    ServerDatabase,
    create_user,
    server_environment,
)
from tests.browser import browser  # noqa: F401 - the module-scoped Chromium fixture
from tests.wheelhouse import offline_pip  # noqa: F401 - the run's wheelhouse, for bin/run


@pytest.fixture(autouse=True, scope="session")
def _no_trace_export() -> None:
    # No test has an API key, so the SDK's trace exporter would only log warnings.
    set_tracing_disabled(True)


@pytest.fixture(scope="module")
def log_dir() -> Path:
    from django.conf import settings

    directory = Path(settings.ARTIFACTS_DIR) / "server-logs"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


@pytest.fixture(scope="module")
def server_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerDatabase]:
    database = ServerDatabase(tmp_path_factory.mktemp("example-db"))
    try:
        yield database
    finally:
        database.drop()


@pytest.fixture(scope="module")
def chat_server(server_database: ServerDatabase, log_dir: Path) -> Iterator[DaphneServer]:
    """One daphne worker with the in-memory channel layer."""
    server = DaphneServer("chat", log_dir, server_environment(server_database.url))
    server.start()
    yield server
    server.close()


@pytest.fixture
def chat_user(chat_server: DaphneServer) -> tuple[str, str]:
    """A new login on the servers' database (made by ``manage.py ensure_demo_user``)."""
    return create_user(chat_server.env)


def log_in(page: Any, server_url: str, user: tuple[str, str]) -> None:
    page.goto(server_url + "/accounts/login/")
    page.get_by_label("Username").fill(user[0])
    page.get_by_label("Password").fill(user[1])
    page.get_by_role("button", name="Log in", exact=True).click()
    page.wait_for_url(re.compile(r".*/c/[0-9a-f]{32}/$"))
    wait_connected(page)


def wait_connected(page: Any) -> None:
    page.wait_for_selector('#connection-status[data-state="connected"]', timeout=15_000)


def wait_history(page: Any) -> None:
    """Wait until the page has shown the conversation's history frame: "connected" is
    said when the socket or stream opens, a moment before that frame arrives."""
    wait_connected(page)
    wait_for_mark(page, "das:history-shown", timeout_ms=15_000)


#: Resolves when the page has made the performance mark ``name``, or fails after ``ms``:
#: an observer, not wait_for_function, whose polling evaluates strings the page's CSP forbids.
_MARK_MADE = """([name, ms]) => new Promise((resolve, reject) => {
    if (performance.getEntriesByName(name).length) return resolve(true);
    const observer = new PerformanceObserver((list) => {
        if (list.getEntriesByName(name).length) { observer.disconnect(); resolve(true); }
    });
    observer.observe({ type: "mark" });
    setTimeout(() => reject(new Error(`no ${name} mark in ${ms} ms`)), ms);
})"""


def wait_for_mark(page: Any, name: str, timeout_ms: int) -> None:
    page.evaluate(_MARK_MADE, [name, timeout_ms])


@pytest.fixture
def console_problems() -> list[str]:
    """The script errors and console errors a page fixture collects (``test_e2e_browser``'s
    ``page``): a test that expects some takes those out before the fixture checks."""
    return []


def a_failed_reconnection(problem: str) -> bool:
    """Chromium's console error for an attempt of the page to open its socket that the
    server refused or closed (stopped, or still stopping or starting)."""
    return problem.startswith("console error: WebSocket connection to 'ws://") and (
        "/ws/agent-sessions/" in problem and "' failed: " in problem
    )
