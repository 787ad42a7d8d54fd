"""What the SSE transport's runs use: the channel layer without CHANNEL_LAYERS, no thread
left behind by a POST's run, and one database connection for all open streams."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings

from django_agent_sessions import layers
from django_agent_sessions.layers.local import LocalChannelLayer
from django_agent_sessions.layers.postgres import PostgresChannelLayer
from tests import approval_agent, chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.sse.client import post
from tests.sse.views_helpers import agent_settings, opened, url  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


async def test_without_channel_layers_runs_stream_inside_the_process(
    settings, alice_cookie, session_id
):
    """One process's layer on SQLite, PostgreSQL's notifications on PostgreSQL."""
    settings.CHANNEL_LAYERS = {}
    expected = PostgresChannelLayer if settings.TEST_DB == "postgres" else LocalChannelLayer
    assert isinstance(layers.stream_layer(), expected)
    two_payments = streamed_reply("", tool_calls=approval_agent.two_payments())
    chat_agent.script(streamed_reply("Hello."), two_payments, streamed_reply("Paid."))
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, alice_cookie))[0] == 202
    await stream.frames_until("run.completed")
    watcher, _history = await opened(session_id, alice_cookie)  # a second tab
    assert (await post(url(session_id, "messages/"), {"text": "pay"}, alice_cookie))[0] == 202
    for tab in (stream, watcher):
        requested = [await tab.frames_until("approval.requested") for _call in range(2)]
        assert [frames[-1]["call_id"] for frames in requested] == ["call-ann", "call-bob"]
    for call_id in ("call-ann", "call-bob"):
        decision = {"approve": call_id == "call-ann"}
        assert (await post(url(session_id, f"approvals/{call_id}/"), decision, alice_cookie))[
            0
        ] == 202
    for tab in (stream, watcher):
        assert (await tab.frames_until("run.completed"))[-1]["type"] == "run.completed"
    assert await run_statuses(session_id) == ["completed", "completed"]


async def test_runs_started_by_posts_leave_no_threads_behind(alice_cookie, session_id):
    """A run outlives the POST that started it; its database hops must not each get a
    new thread (and connection) once the request is over (``views.detached``)."""
    chat_agent.script(*[streamed_reply(f"reply {n}") for n in range(21)])
    stream, _history = await opened(session_id, alice_cookie)
    counts = []
    before = {thread.name for thread in threading.enumerate()}
    for n in range(21):
        assert (await post(url(session_id, "messages/"), {"text": f"m{n}"}, alice_cookie))[0] == 202
        await stream.frames_until("run.completed")
        counts.append(threading.active_count())
    new = {thread.name for thread in threading.enumerate()} - before
    assert counts[-1] <= counts[0], f"{counts}; threads started meanwhile: {sorted(new)}"


def _connections_to_the_test_database() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


@pytest.mark.skipif(
    settings.TEST_DB != "postgres", reason="counts the server's connections (pg_stat_activity)"
)
async def test_open_streams_and_their_posts_share_one_database_connection(
    alice_cookie, monkeypatch
):
    """Every stream's and POST's database work runs on asgiref's one thread, as the
    websocket's does: open streams do not each hold a connection."""
    from asgiref.sync import sync_to_async
    from django.db import connections

    # Persistent connections, as in production (the test settings close each one).
    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 600)

    count = sync_to_async(_connections_to_the_test_database, thread_sensitive=False)
    chat_agent.script(*[streamed_reply("hi") for _ in range(10)])
    before = await count()
    streams = []
    for n in range(10):
        stream, _history = await opened(f"conv-pool-{n}", alice_cookie)
        assert (await post(url(f"conv-pool-{n}", "messages/"), {"text": "x"}, alice_cookie))[
            0
        ] == 202
        await stream.frames_until("run.completed")
        streams.append(stream)
    assert await count() - before <= 2, "a connection per open stream"
