"""Fixtures of the openai-agents test suite that the ported session tests rely on.

Only what those tests need: no real model client, a default API key for clients the
tests construct (never used: every model is scripted or mocked), and the marker that
lets a test opt into real model *classes* with mocked transports. Every ported test
runs against the test database (transactional: DjangoSession writes from its own
thread).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agents.models import _openai_shared
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.models.openai_responses import OpenAIResponsesModel
from agents.run import set_default_agent_runner

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.django_db(transaction=True))


@pytest.fixture(scope="package", autouse=True)
def ensure_openai_api_key():
    """The key for these tests only: left in the environment, it reached the worker
    processes later tests of the same pytest process start, whose SDK then tried to
    export its traces to the network (retrying, for seconds of CPU, in every worker)."""
    if os.environ.get("OPENAI_API_KEY"):
        yield
        return
    os.environ["OPENAI_API_KEY"] = "test_key"
    yield
    del os.environ["OPENAI_API_KEY"]


@pytest.fixture(autouse=True)
def clear_openai_settings():
    _openai_shared._default_openai_key = None
    _openai_shared._default_openai_client = None
    _openai_shared._use_responses_by_default = True
    _openai_shared.set_default_openai_responses_transport("http")


@pytest.fixture(autouse=True)
def clear_default_runner():
    set_default_agent_runner(None)


@pytest.fixture(autouse=True)
def disable_real_model_clients(monkeypatch, request):
    if request.node.get_closest_marker("allow_call_model_methods"):
        return

    def failing_version(*args, **kwargs):
        pytest.fail("Real models should not be used in tests!")

    monkeypatch.setattr(OpenAIResponsesModel, "get_response", failing_version)
    monkeypatch.setattr(OpenAIResponsesModel, "stream_response", failing_version)
    monkeypatch.setattr(OpenAIChatCompletionsModel, "get_response", failing_version)
    monkeypatch.setattr(OpenAIChatCompletionsModel, "stream_response", failing_version)


@pytest.fixture(autouse=True)
def _insert_hooks(monkeypatch):
    """Route DjangoSession's INSERT through the hooks of ``stores.reject_inserts``."""
    from django_agent_sessions.store import items as storage
    from tests.sdk import stores

    monkeypatch.setattr(storage, "_insert_items", stores.hooked_insert(storage._insert_items))
    yield
    stores.insert_hooks.clear()
