from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from django_agent_sessions import DjangoSession
from tests.attachment_helpers import file_storage  # noqa: F401 - a storage of the test's own
from tests.wheelhouse import offline_pip  # noqa: F401 - the run's wheelhouse, for fresh installs


def pytest_configure(config: pytest.Config) -> None:
    # Tests run offline: the SDK's trace exporter would only warn about a missing key.
    from agents import set_tracing_disabled

    set_tracing_disabled(True)


@pytest.fixture
def session_id() -> str:
    return f"conv-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make_session(session_id: str) -> Callable[..., DjangoSession]:
    def make(sid: str | None = None, **kwargs: object) -> DjangoSession:
        return DjangoSession(sid or session_id, **kwargs)  # type: ignore[arg-type]

    return make


@pytest.fixture
def make_user(transactional_db: None) -> Callable[[str], AbstractBaseUser]:
    def make(username: str) -> AbstractBaseUser:
        return get_user_model().objects.create_user(username=username, password="pw-" + username)

    return make


def user_message(text: str) -> Any:
    return {"role": "user", "content": text}


def assistant_message(text: str) -> Any:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


@pytest.fixture(autouse=True)
def _close_executor_connections():
    """Close the connection DjangoSession's sync thread opened during the test.

    ``sync_to_async(thread_sensitive=True)`` runs outside the test's own thread, so its
    connection would otherwise outlive the test (and block dropping the test database).
    """
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    SyncToAsync.single_thread_executor.submit(connections.close_all).result()


@pytest.fixture(scope="session", autouse=True)
def _drop_stray_connections(django_db_setup, django_db_blocker):
    """Before the test database is dropped, end connections other threads left open.

    Threads that ran their own event loops (concurrency tests, ``run_sync``) leave
    their connections to be garbage collected; PostgreSQL refuses to drop a database
    while they exist.
    """
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
