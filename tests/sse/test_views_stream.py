"""The event stream through Django's real ASGI handler: a run's events with their ids,
history after it, catching up mid-run, heartbeats, and streams that end or close."""

from __future__ import annotations

import asyncio

import pytest

from tests import chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.sse.client import EventStream, post
from tests.sse.views_helpers import agent_settings, opened, url  # noqa: F401
from tests.streaming.wire.test_protocol import SERVER, problems

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "Sunny in Paris today, around twenty-one degrees, with a gentle western breeze."


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
    # Each run's end names its own reply, not the conversation's previous one.
    replies = [first[-1]["reply_item_id"], frames[-1]["reply_item_id"]]
    assert replies == [history["items"][1]["id"], history["items"][3]["id"]]
    # ... and the person's message it answered, as stored: the chat branches from it.
    asked = [first[-1]["user_item_id"], frames[-1]["user_item_id"]]
    assert asked == [history["items"][0]["id"], history["items"][2]["id"]]
    assert await run_statuses(session_id) == ["completed", "completed"]


async def test_closing_the_stream_cancels_nothing(alice_cookie, session_id):
    chat_agent.script(streamed_reply("on and on " * 30, delay=0.005))
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "long"}, alice_cookie))[0] == 202
    await stream.frames_until("text.delta")
    await stream.close()
    for _attempt in range(500):
        if await run_statuses(session_id) != ["running"]:
            break
        await asyncio.sleep(0.01)
    assert await run_statuses(session_id) == ["completed"]


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
