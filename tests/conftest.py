from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from django_agent_sessions import DjangoSession


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


def user_message(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant_message(text: str) -> dict[str, object]:
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


@pytest.fixture(autouse=True, scope="session")
def _no_trace_export():
    """Runs in tests use scripted models; nothing may try to reach OpenAI's trace API."""
    from agents import set_tracing_disabled

    set_tracing_disabled(True)
