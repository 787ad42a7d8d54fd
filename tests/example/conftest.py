"""Fixtures for the example project's tests: live daphne servers and logged-in pages."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import set_tracing_disabled
from django.contrib.auth import get_user_model

from tests.example.servers import DaphneServer, server_environment


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
def chat_server(django_db_setup: None, log_dir: Path) -> Iterator[DaphneServer]:
    """One daphne worker on the test database, with the in-memory channel layer."""
    from django.conf import settings

    server = DaphneServer("chat", log_dir, server_environment(settings.DATABASES["default"]))
    server.start()
    yield server
    server.close()


@pytest.fixture
def chat_user(transactional_db: None) -> tuple[str, str]:
    """A user committed to the test database, so that the servers see it."""
    username = f"user-{uuid.uuid4().hex[:8]}"
    password = f"pw-{uuid.uuid4().hex}"
    get_user_model().objects.create_user(username=username, password=password)
    return username, password


def log_in(page: Any, server_url: str, user: tuple[str, str]) -> None:
    page.goto(server_url + "/accounts/login/")
    page.get_by_label("Username").fill(user[0])
    page.get_by_label("Password").fill(user[1])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r".*/c/[0-9a-f]{32}/$"))
    wait_connected(page)


def wait_connected(page: Any) -> None:
    page.wait_for_selector('#connection-status[data-state="connected"]', timeout=15_000)
