"""Runs as tasks, seen from a tab (the websocket consumer, in process): the message is
recorded and enqueued (the immediate backend hands it to this process's run host, a
worker apart: its events reach the tab through the channel layer, as a task worker's
do); the tab sees the same frames as for an inline run; Stop reaches the run; a last
approval decision enqueues the resumption, which a task executes once. Each test runs
on channels_redis's two layers: the core one and the pub/sub one (where a layer keeps
one set of subscriptions per event loop, so the run host's loop is a process apart)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from django_agent_sessions import DjangoSession, start_run
from django_agent_sessions.models import AgentRun, RunOrder
from tests import approval_agent, chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.sse.client import post
from tests.sse.views_helpers import opened
from tests.sse.views_helpers import url as sse_url
from tests.websockets import Socket, of_type, text_of

# Redis: the run host's event loop reaches the tabs' through a layer across loops (check E064).
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("closing_sockets"),
    pytest.mark.redis,
]
REPLY = "Ann is paid; Bob's payment was refused."


PUBSUB = "channels_redis.pubsub.RedisPubSubChannelLayer"


@pytest.fixture(params=["core", "pubsub"])
def as_tasks(request, use_agent, settings):
    if not os.environ.get("REDIS_URL"):
        if os.environ.get("CI"):
            pytest.fail("REDIS_URL is not set: CI must run the tests of runs as tasks")
        pytest.skip("REDIS_URL is not set (bin/test starts Redis and sets it)")
    if request.param == "pubsub":
        layer = settings.CHANNEL_LAYERS["default"]
        settings.CHANNEL_LAYERS = {"default": {**layer, "BACKEND": PUBSUB}}

    def configure(agent: str) -> None:
        use_agent(agent, RUNS="tasks", CATCHUP_TIMEOUT_SECONDS=0.3, GAP_TIMEOUT_SECONDS=0.2)

    return configure


async def test_a_message_runs_as_a_task_and_the_tab_sees_every_frame(
    as_tasks, alice_cookie, session_id
):
    as_tasks("tests.chat_agent.make_agent")
    chat_agent.script(streamed_reply("Hello from a task worker.", delay=0.005))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Hi")
    frames = await socket.until("run.completed")
    assert of_type(frames, "run.started")
    assert text_of(frames) == "Hello from a task worker."
    run = await AgentRun.objects.aget(session__session_id=session_id)
    order = await RunOrder.objects.aget(run=run)
    assert (run.status, order.origin, order.claimed, order.detached) == (
        "completed",
        "tab",
        1,
        False,
    )
    await socket.close()


async def test_stop_from_the_tab_reaches_the_run_on_its_worker(as_tasks, alice_cookie, session_id):
    as_tasks("tests.chat_agent.make_agent")
    produced: list[str] = []
    story = "and so the story goes on " * 40
    chat_agent.script(streamed_reply(story, delay=0.02, progress=produced))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Tell me a long story")
    await socket.until("text.delta")
    await socket.send({"type": "cancel"})
    await socket.until("run.cancelled")
    assert len("".join(produced)) < len(story) / 2
    assert await run_statuses(session_id) == ["cancelled"]
    await socket.close()


async def test_a_decision_enqueues_the_resumption_which_runs_once(
    as_tasks, alice_cookie, session_id
):
    as_tasks("tests.chat_agent.make_payment_agent")
    two_payments = streamed_reply("", tool_calls=approval_agent.two_payments())
    chat_agent.script(two_payments, streamed_reply(REPLY))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Pay Ann and Bob")
    await socket.until("approval.requested")
    await socket.until("approval.requested")
    assert await run_statuses(session_id) == ["waiting"]
    await socket.send({"type": "approval", "call_id": "call-ann", "approve": True})
    await socket.send({"type": "approval", "call_id": "call-bob", "approve": False})
    frames: list[dict[str, Any]] = await socket.until("run.completed")
    assert text_of(frames) == REPLY
    assert approval_agent.EXECUTED == ["ann"]  # the approved call ran once, the other never
    order = await RunOrder.objects.aget(run__session__session_id=session_id)
    assert (order.ordered, order.claimed) == (2, 2)
    await socket.close()


async def test_a_tab_opened_mid_run_follows_a_run_started_from_code(
    as_tasks, alice, alice_cookie, session_id
):
    """Started with no tab; a tab opens mid-run, shows what was written and what follows,
    ends with the stored text; a tab that leaves does not stop a run it did not start."""
    as_tasks("tests.chat_agent.make_agent")
    story = "Once upon a time, a run started from code. " * 8
    chat_agent.script(streamed_reply(story, delay=0.01))
    run_id = await start_run(session_id, "Tell me a story", owner=alice)
    leaving = Socket(session_id, alice_cookie)
    await leaving.open()
    await leaving.close()  # not the run's tab: the run goes on (it is detached)
    socket = Socket(session_id, alice_cookie)
    history = await socket.open()
    frames = await socket.until("run.completed", timeout=10)
    active = history["active_run"]
    assert active is not None  # opened mid-run
    deltas = [f for f in frames if f["type"] == "text.delta" and f["seq"] > active.get("seq", -1)]
    shown = active.get("text", "") + "".join(f["delta"] for f in deltas)
    assert frames[-1]["run_id"] == run_id
    assert shown == story
    stored = await DjangoSession(session_id).get_items()
    assert stored[-1]["content"][0]["text"] == story
    await socket.close()


async def test_over_the_http_stream_too(as_tasks, alice_cookie, session_id):
    """The SSE transport: the message posted, the run executed by a task, the stream
    shows it with its ids, and a Stop posted mid-run reaches it."""
    as_tasks("tests.chat_agent.make_agent")
    answer = "Hello over Server-Sent Events."
    chat_agent.script(streamed_reply(answer, delay=0.005), streamed_reply("on " * 200, delay=0.02))
    stream, _history = await opened(session_id, alice_cookie)
    status, _ = await post(sse_url(session_id, "messages/"), {"text": "Hi"}, alice_cookie)
    assert status == 202
    frames = await stream.frames_until("run.completed")
    assert "".join(f["delta"] for f in frames if f["type"] == "text.delta") == answer
    assert stream.last_id == f"{frames[-1]['run_id']}:{frames[-1]['seq']}"
    await post(sse_url(session_id, "messages/"), {"text": "And on?"}, alice_cookie)
    await stream.frames_until("text.delta")
    status, _ = await post(sse_url(session_id, "cancel/"), {}, alice_cookie)
    assert status in (200, 202)
    await stream.frames_until("run.cancelled")
    assert await run_statuses(session_id) == ["completed", "cancelled"]
    await stream.close()
