"""The SSE transport through Django's real ASGI handler: the stream, the POSTs, errors."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from django_agent_sessions import layers
from django_agent_sessions.layers.local import LocalChannelLayer
from django_agent_sessions.layers.postgres import PostgresChannelLayer
from django_agent_sessions.models import AgentRun
from django_agent_sessions.store import conversations
from tests import approval_agent, chat_agent
from tests.scripted import streamed_reply
from tests.sse.client import EventStream, post
from tests.websocket.test_protocol import SERVER, problems

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "Sunny in Paris today, around twenty-one degrees, with a gentle western breeze."


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_payment_agent")


def url(session_id: str, tail: str) -> str:
    return f"/chat/c/{session_id}/{tail}"


async def statuses(session_id: str) -> list[str]:
    query = AgentRun.objects.filter(session__session_id=session_id).order_by("started_at")
    return [status async for status in query.values_list("status", flat=True)]


async def opened(session_id: str, cookie: bytes, **kwargs: Any) -> tuple[EventStream, dict]:
    stream = EventStream(url(session_id, "events/"), cookie, **kwargs)
    assert await stream.status() == 200
    history = await stream.frame()
    assert history["type"] == "history", history
    return stream, history


async def test_a_run_streams_as_events_with_ids_and_is_history_after(alice_cookie, session_id):
    chat_agent.script(streamed_reply("Hello."), streamed_reply(ANSWER, delay=0.005))
    stream, history = await opened(session_id, alice_cookie)
    assert stream.response.headers["content-type"].startswith("text/event-stream")
    assert stream.response.headers["cache-control"] == "no-cache"
    assert history["items"] == []
    status, body = await post(url(session_id, "messages/"), {"text": "Hi"}, alice_cookie)
    assert (status, body) == (202, {"accepted": "user_message"})
    # The first message creates the conversation: the stream, open on its id, joins it
    # (told by its own process, before the run could publish) and follows the run.
    first = await stream.frames_until("run.completed")
    assert first[0]["type"] == "run.started"

    status, _body = await post(url(session_id, "messages/"), {"text": "Weather?"}, alice_cookie)
    assert status == 202
    frames = await stream.frames_until("run.completed")
    assert [problems(SERVER, frame) for frame in [*first, *frames]] == [[]] * (
        len(first) + len(frames)
    )
    run_id = frames[0]["run_id"]
    assert frames[0]["type"] == "run.started"
    assert "".join(f["delta"] for f in frames if f["type"] == "text.delta") == ANSWER
    assert stream.last_id == f"{run_id}:{frames[-1]['seq']}"
    await stream.close()

    _again, history = await opened(session_id, alice_cookie, last_event_id=stream.last_id)
    texts = [item.get("text") for item in history["items"]]
    assert texts == ["Hi", "Hello.", "Weather?", ANSWER]
    assert await statuses(session_id) == ["completed", "completed"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"text": "  "}, 400, "empty_text"),
        (b"{not json", 400, "invalid_json"),
        (b"\xff\xfe", 400, "invalid_json"),
        ([1, 2], 400, "invalid_frame"),
        ({"text": "x" * 70_000}, 413, "too_large"),
        ({"text": "hi", "client_id": 5}, 400, "invalid_frame"),
        ({"text": "half \ud83d emoji"}, 400, "invalid_text"),
    ],
)
async def test_a_bad_message_is_refused_with_its_code_and_nothing_is_stored(
    alice_cookie, session_id, body, status, code
):
    answer = await post(url(session_id, "messages/"), body, alice_cookie)
    assert answer[0] == status
    assert (answer[1]["type"], answer[1]["code"]) == ("error", code)
    assert problems(SERVER, answer[1]) == []
    assert await statuses(session_id) == []


async def test_busy_rate_limited_and_unknown_approval_have_their_statuses(
    settings, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RATE_LIMIT": "1/m"}
    chat_agent.script(streamed_reply("and on " * 200, delay=0.01), streamed_reply("ok"))
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "a"}, alice_cookie))[0] == 202
    await stream.frames_until("run.started", "history")
    status, body = await post(
        url(session_id, "messages/"), {"text": "b", "client_id": "c2"}, alice_cookie
    )
    assert (status, body["code"], body["client_id"]) == (409, "busy", "c2")
    assert (await post(url(session_id, "cancel/"), {}, alice_cookie))[0] == 202
    await stream.frames_until("run.cancelled")
    status, body = await post(url(session_id, "messages/"), {"text": "c"}, alice_cookie)
    assert (status, body["code"]) == (429, "rate_limited")
    assert body["retry_after"] > 0
    status, body = await post(url(session_id, "approvals/call-x/"), {"approve": True}, alice_cookie)
    assert (status, body["code"]) == (404, "unknown_approval")
    status, body = await post(
        url(session_id, "approvals/call-x/"), {"approve": "yes"}, alice_cookie
    )
    assert (status, body["code"]) == (400, "invalid_approval")


async def test_who_may_post_and_stream(alice_cookie, bob_cookie, session_id):
    chat_agent.script(streamed_reply("mine"))
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, None))[0] == 401
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, alice_cookie, csrf=False))[
        0
    ] == 403
    assert await statuses(session_id) == []
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, alice_cookie))[0] == 202
    await stream.frames_until("run.completed")
    # Bob may neither read nor write Alice's conversation.
    assert await EventStream(url(session_id, "events/"), bob_cookie).status() == 403
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, bob_cookie))[0] == 403
    assert await EventStream(url(session_id, "events/"), None).status() == 401


async def test_a_stream_waiting_on_a_new_id_follows_its_first_run(alice_cookie, session_id):
    chat_agent.script(streamed_reply("first"))
    stream, history = await opened(session_id, alice_cookie)  # nothing stored yet
    assert (history["items"], await statuses(session_id)) == ([], [])
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, alice_cookie))[0] == 202
    frames = await stream.frames_until("run.completed")
    # From the run's start, as the tab that sent the message: no catch-up.
    assert [frame["type"] for frame in frames if frame["type"] != "text.delta"] == [
        "run.started",
        "item.completed",
        "item.completed",
        "run.completed",
    ]
    assert "".join(frame["delta"] for frame in frames if frame["type"] == "text.delta") == "first"


def created_right_after_the_lookup(monkeypatch: Any, owner: Any) -> None:
    """``owner`` creates the conversation right after the stream's lookup found none
    (the POST's lookup, later, finds it), announcing it to nobody."""
    lookup = conversations.find_conversation
    lookups: list[Any] = []

    def created_after(session_id: str, *, owner_id: Any) -> Any:
        found = lookup(session_id, owner_id=owner_id)
        if not lookups:
            conversations.open_conversation(session_id, owner_id=owner.pk)
        lookups.append(found)
        return found

    monkeypatch.setattr(conversations, "find_conversation", created_after)


async def test_a_conversation_created_before_the_stream_waited_is_joined(
    alice, alice_cookie, session_id, monkeypatch
):
    """Created (by another tab's first message) after the stream found no conversation
    and before it waited in the new id's group: nobody announces it to the stream,
    which looks again once waiting."""
    chat_agent.script(streamed_reply("late but there"))
    created_right_after_the_lookup(monkeypatch, alice)
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, alice_cookie))[0] == 202
    frames = await stream.frames_until("run.completed")
    assert "".join(f["delta"] for f in frames if f["type"] == "text.delta") == "late but there"


async def test_a_stream_on_an_id_someone_else_created_meanwhile_ends(
    alice_cookie, session_id, make_user, monkeypatch
):
    created_right_after_the_lookup(monkeypatch, await sync_to_async(make_user)("bob"))
    stream = EventStream(url(session_id, "events/"), alice_cookie)
    assert await stream.status() == 200
    assert await stream.next() is None  # ended without a frame; its reconnect gets 403
    assert await EventStream(url(session_id, "events/"), alice_cookie).status() == 403


async def test_closing_the_stream_cancels_nothing(alice_cookie, session_id):
    chat_agent.script(streamed_reply("on and on " * 30, delay=0.005))
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "long"}, alice_cookie))[0] == 202
    await stream.frames_until("text.delta")
    await stream.close()
    for _attempt in range(500):
        if await statuses(session_id) != ["running"]:
            break
        await asyncio.sleep(0.01)
    assert await statuses(session_id) == ["completed"]


async def test_a_stream_opened_mid_run_catches_up(alice_cookie, session_id):
    chat_agent.script(streamed_reply("word " * 100, delay=0.005))
    first, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "go"}, alice_cookie))[0] == 202
    await first.frames_until("text.delta")
    second, history = await opened(session_id, alice_cookie)
    assert history["active_run"] is not None
    later = await second.frames_until("run.completed")
    shown = history["active_run"]["text"] + "".join(
        f["delta"] for f in later if f["type"] == "text.delta"
    )
    assert shown == "word " * 100


async def test_approve_stop_and_load_older_over_http(alice_cookie, session_id):
    two_payments = streamed_reply("", tool_calls=approval_agent.two_payments())
    chat_agent.script(two_payments, streamed_reply("Paid."))
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "pay"}, alice_cookie))[0] == 202
    await stream.frames_until("approval.requested")
    await stream.frames_until("approval.requested")
    for call_id, approve in (("call-ann", True), ("call-bob", False)):
        decision = {"approve": approve, "message": "" if approve else "no"}
        status, _body = await post(url(session_id, f"approvals/{call_id}/"), decision, alice_cookie)
        assert status == 202
    await stream.frames_until("run.completed")
    assert approval_agent.EXECUTED == ["ann"]
    status, page = await _get_json(url(session_id, "older/?before=1"), alice_cookie)
    assert (status, page["type"], page["items"]) == (200, "history.page", [])


async def test_heartbeats_and_the_stream_ends_after_its_time(settings, alice_cookie, session_id):
    settings.AGENT_SESSIONS = {
        **settings.AGENT_SESSIONS,
        "SSE_HEARTBEAT_SECONDS": 0.05,
        "SSE_STREAM_SECONDS": 0.5,
    }
    stream, _history = await opened(session_id, alice_cookie)
    assert await stream.next() is None  # ended by the server, after heartbeats
    assert stream.comments.count("ping") >= 3


async def test_gzip_middleware_leaves_the_stream_alone(settings, alice_cookie, session_id):
    settings.MIDDLEWARE = ["django.middleware.gzip.GZipMiddleware", *settings.MIDDLEWARE]
    chat_agent.script(streamed_reply("zipped? " * 50))
    stream = EventStream(url(session_id, "events/"), alice_cookie, accept_gzip=True)
    assert await stream.status() == 200
    assert stream.response.headers.get("content-encoding", "") == ""
    assert (await stream.frame())["type"] == "history"
    assert (await post(url(session_id, "messages/"), {"text": "z"}, alice_cookie))[0] == 202
    assert (await stream.frames_until("run.completed"))[-1]["type"] == "run.completed"


async def _get_json(path: str, cookie: bytes) -> tuple[int, Any]:
    stream = EventStream(path, cookie)
    status = await stream.status()
    body = b""
    while (chunk := await asyncio.wait_for(stream.response.chunks.get(), 10)) is not None:
        body += chunk
    await stream.close()
    return status, json.loads(body)


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
    assert await statuses(session_id) == ["completed", "completed"]


async def test_runs_started_by_posts_leave_no_threads_behind(alice_cookie, session_id):
    """A run outlives the POST that started it; its database hops must not each get a
    new thread (and connection) once the request is over (``views.detached``)."""
    chat_agent.script(*[streamed_reply(f"reply {n}") for n in range(21)])
    stream, _history = await opened(session_id, alice_cookie)
    counts = []
    for n in range(21):
        assert (await post(url(session_id, "messages/"), {"text": f"m{n}"}, alice_cookie))[0] == 202
        await stream.frames_until("run.completed")
        counts.append(threading.active_count())
    assert counts[-1] <= counts[0], counts


async def test_another_users_stream_on_a_new_id_never_hears_of_its_conversation(
    alice_cookie, bob_cookie, session_id
):
    chat_agent.script(streamed_reply("for Alice only"))
    bobs, _history = await opened(session_id, bob_cookie)
    alices, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "a secret"}, alice_cookie))[0] == 202
    await alices.frames_until("run.completed")
    with pytest.raises(asyncio.TimeoutError):
        await bobs.next(timeout=0.5)  # (heartbeats come every 15 s)


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
