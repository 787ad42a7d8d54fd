"""The checks of the layer the SSE chat's streams use (``layers/checks.py``)."""

from __future__ import annotations

import pytest

from django_agent_sessions import layers
from django_agent_sessions.layers.checks import check_stream_layer

SSE_CHAT = {"AGENT": "tests.chat_agent.make_agent", "TRANSPORT": "sse", "RATE_LIMIT": "30/m"}
LOCMEM = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


@pytest.fixture
def sse_chat(settings):
    settings.AGENT_SESSIONS = SSE_CHAT
    settings.CHANNEL_LAYERS = {}
    settings.CACHES = LOCMEM
    return settings


def ids(messages) -> list[str]:
    return [message.id for message in messages]


def test_postgresql_without_psycopg3_says_the_streams_stay_in_each_worker(sse_chat, monkeypatch):
    monkeypatch.setattr(layers, "on_postgresql", lambda: True)
    monkeypatch.setattr(layers, "_psycopg3", lambda: False)
    assert layers.stream_layer_kind() == "local"
    (warning,) = check_stream_layer()
    assert warning.id == "django_agent_sessions.W015"
    assert "[postgres]" in str(warning.hint)


def test_a_per_process_rate_limit_beside_the_postgresql_layer_warns(sse_chat, monkeypatch):
    monkeypatch.setattr(layers, "on_postgresql", lambda: True)
    assert layers.stream_layer_kind() == "postgres"
    assert ids(check_stream_layer()) == ["django_agent_sessions.W013"]
    sse_chat.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": ""}
    }
    assert check_stream_layer() == []
    sse_chat.CACHES = LOCMEM
    sse_chat.AGENT_SESSIONS = {**SSE_CHAT, "RATE_LIMIT": None}
    assert check_stream_layer() == []


def test_one_worker_on_sqlite_and_the_websocket_chat_are_not_its_concern(sse_chat, monkeypatch):
    monkeypatch.setattr(layers, "on_postgresql", lambda: False)
    assert layers.stream_layer_kind() == "local"
    assert check_stream_layer() == []  # SQLite: one worker, as the guide says
    monkeypatch.setattr(layers, "on_postgresql", lambda: True)
    sse_chat.AGENT_SESSIONS = {**SSE_CHAT, "TRANSPORT": "websocket"}
    assert check_stream_layer() == []
