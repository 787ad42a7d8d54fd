"""LISTEN/NOTIFY as a channel layer: two layers stand for two worker processes (each has
its own origin and connections) on the test database."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from django_agent_sessions import layers
from django_agent_sessions.layers import postgres
from django_agent_sessions.layers.postgres import PostgresChannelLayer

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(settings.TEST_DB != "postgres", reason="LISTEN/NOTIFY is PostgreSQL's"),
]


async def _receive(layer: PostgresChannelLayer, channel: str) -> dict[str, Any]:
    return await asyncio.wait_for(layer.receive(channel), 5)


async def test_groups_and_channels_reach_the_other_process():
    first, second = PostgresChannelLayer(), PostgresChannelLayer()
    await first.group_add("conversation", "stream-1")
    await second.group_add("control", "run-2")
    await second.group_send("conversation", {"type": "agent.event", "n": 1})
    assert await _receive(first, "stream-1") == {"type": "agent.event", "n": 1}
    await first.send("run-2", {"type": "agent.cancel"})  # a channel of the other process
    assert await _receive(second, "run-2") == {"type": "agent.cancel"}
    await first.group_discard("conversation", "stream-1")
    await second.group_send("conversation", {"type": "agent.event", "n": 2})
    await second.group_send("control", {"type": "agent.left"})  # heard after n=2, in order
    assert await _receive(second, "run-2") == {"type": "agent.left"}
    assert not first.local.holds("stream-1")


async def test_a_message_past_the_payload_limit_arrives_whole_and_in_order():
    first, second = PostgresChannelLayer(), PostgresChannelLayer()
    await first.group_add("g", "reader")
    text = "é and 🙂 " * 4000  # about 40,000 bytes as JSON: six parts
    await second.group_send("g", {"text": text})
    await second.group_send("g", {"text": "after"})
    assert await _receive(first, "reader") == {"text": text}
    assert await _receive(first, "reader") == {"text": "after"}
    assert postgres._split("x" * 10) == ["x" * 10]
    assert len(postgres._split("x" * (postgres.PART_BYTES * 2 + 1))) == 3


def _terminate_listeners() -> int:
    # This test's database only: the other test process's servers listen on the same
    # PostgreSQL server (its own database), and ending their listeners hung its tests.
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity "
            "WHERE query LIKE 'LISTEN %%' AND pid <> pg_backend_pid() "
            "AND datname = current_database()"
        )
        return int(cursor.fetchone()[0])


async def test_after_its_connection_is_ended_the_listener_listens_again_and_says_so(caplog):
    first, second = PostgresChannelLayer(), PostgresChannelLayer()
    await first.group_add("g", "reader")
    await second.group_add("h", "other")
    assert await sync_to_async(_terminate_listeners)() >= 2
    # Every channel of the process is told that messages may have been lost meanwhile.
    assert await asyncio.wait_for(first.receive("reader"), 15) == {"type": "agent.resync"}
    assert await asyncio.wait_for(second.receive("other"), 15) == {"type": "agent.resync"}
    await second.group_send("g", {"after": "restart"})
    assert await _receive(first, "reader") == {"after": "restart"}
    assert "Listening for notifications failed" in caplog.text


async def test_http_streams_use_it_on_postgresql_without_channel_layers(settings):
    settings.CHANNEL_LAYERS = {}
    assert isinstance(layers.stream_layer(), PostgresChannelLayer)
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    assert not isinstance(layers.stream_layer(), PostgresChannelLayer)


async def test_a_server_that_cannot_be_reached_fails_the_call_instead_of_hanging(monkeypatch):
    monkeypatch.setattr(postgres, "LISTEN_TIMEOUT", 0.3)
    layer = PostgresChannelLayer()

    async def unreachable() -> None:
        raise OSError("connection refused")

    monkeypatch.setattr(layer, "_connect", unreachable)
    with pytest.raises(ConnectionError, match="notifications are unavailable"):
        await layer.group_add("g", "c")
    with pytest.raises(ConnectionError):
        await layer.group_send("g", {"type": "x"})
    assert layer._listener is not None
    layer._listener.cancel()
