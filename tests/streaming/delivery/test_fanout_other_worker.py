"""A socket of another worker follows a run through the channel layer: from the run's
start, after a catch-up answered late, and into a run that starts while its catch-up on
the previous one is still pending.

The socket of another worker is simulated in this process: it is not in this process's
registry (runs see it as remote), and it does not recognise this process's origin.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from channels.testing import WebsocketCommunicator
from django.urls import path

from django_agent_sessions.conf import app_settings
from django_agent_sessions.streaming.delivery.socket_io import SocketIO
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.websocket.consumer import AgentSessionConsumer
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.websocket.fanout_helpers import (  # noqa: F401 - fixtures
    ANSWER,
    agent_settings,
    conversation_pk_fixture,
    cookie_fixture,
)
from tests.websockets import ORIGIN, Socket, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


class _RemoteIO(SocketIO):
    def watch(self, conversation_pk: int, channel_name: str) -> None:
        pass  # not in this process's registry: runs see the socket as remote


class OtherWorkerConsumer(AgentSessionConsumer):
    io_class = _RemoteIO

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Without its origin, an event of this process reads as another worker's.
        await super().dispatch({k: v for k, v in message.items() if k != "origin"})


other_worker_application = AllowedHostsOriginValidator(
    AuthMiddlewareStack(
        URLRouter([path("ws/agent-sessions/<str:session_id>/", OtherWorkerConsumer.as_asgi())])
    )
)


class OtherWorkerSocket(Socket):
    def __init__(self, session_id: str, cookie: bytes) -> None:
        super().__init__(session_id, cookie)
        self.communicator = WebsocketCommunicator(
            other_worker_application,
            f"/ws/agent-sessions/{session_id}/",
            headers=[(b"origin", ORIGIN), (b"cookie", cookie)],
        )


def kinds(frames: list[dict[str, Any]]) -> list[str]:
    """The frame types in order, repeats of one type counted once."""
    types = [frame["type"] for frame in frames]
    return [kind for n, kind in enumerate(types) if n == 0 or types[n - 1] != kind]


def shown_text(frames: list[dict[str, Any]]) -> str:
    """The reply as the page shows it: from the last history frame (its stored reply, or
    the text of the run in flight), then the deltas after it."""
    last = max(i for i, frame in enumerate(frames) if frame["type"] == "history")
    history = frames[last]
    if history["active_run"] is None:
        stored = [item["text"] for item in history["items"] if item.get("role") == "assistant"]
        return (stored[-1] if stored else "") + text_of(frames[last + 1 :])
    active = history["active_run"]
    completed = "".join(  # a reply that completed before the snapshot is one of its items
        item["text"]
        for item in active.get("items", [])
        if item["kind"] == "message" and item["role"] == "assistant"
    )
    return completed + str(active.get("text", "")) + text_of(frames[last + 1 :])


async def frames_until_settled(socket: Socket) -> list[dict[str, Any]]:
    """Everything the socket gets until the run has ended and nothing more comes."""
    frames = await socket.until("run.completed", "history", timeout=10)
    while True:
        try:
            frames.append(await socket.receive(timeout=2))
        except TimeoutError:
            return frames


async def until_the_end_of(socket: Socket, run_id: str) -> list[dict[str, Any]]:
    """Frames until the socket learns that ``run_id`` ended: its terminal event or, when
    its catch-up went unanswered until the run was over, the stored history with it."""
    frames = []
    while True:
        frame = await socket.receive(timeout=10)
        frames.append(frame)
        if frame["type"] == "run.completed" and frame["run_id"] == run_id:
            return frames
        stored = frame["type"] == "history" and frame["active_run"] is None
        if stored and any(item.get("run_id") == run_id for item in frame["items"]):
            return frames


async def test_a_socket_of_another_worker_follows_a_run_from_its_start(
    cookie, session_id, conversation_pk
):
    chat_agent.script(streamed_reply(ANSWER, delay=0.01))
    here, there = Socket(session_id, cookie), OtherWorkerSocket(session_id, cookie)
    await here.open()
    await there.open()
    await here.say("Weather?")
    seen_here = await here.until("run.completed")
    assert text_of(seen_here) == ANSWER
    frames = await there.until("run.completed")
    # The same sequence as the run's own worker's tab: run.started, the user's message,
    # the text, the reply, the end (what it missed before following comes as events).
    assert kinds(frames) == kinds(seen_here)
    assert text_of(frames) == ANSWER
    assert frames[-1]["seq"] == seen_here[-1]["seq"]
    assert await there.nothing_more()  # the second run.started copy changed nothing


async def test_a_catchup_answered_late_still_shows_the_whole_reply(
    cookie, session_id, conversation_pk, monkeypatch
):
    """A busy worker answers after the socket's timeout: the page gets the history at
    the timeout, then the late answer (or, if the run ended first, the stored reply)."""
    gate = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=gate, delay=0.05))
    handle = active_runs.ActiveRun._handle
    delayed: list[str] = []

    async def busy(self: active_runs.ActiveRun, message: dict[str, Any]) -> None:
        if message.get("type") == "agent.catchup" and not delayed:
            delayed.append(message["reply_to"])
            await asyncio.sleep(app_settings.CATCHUP_TIMEOUT_SECONDS + 0.3)
        await handle(self, message)

    monkeypatch.setattr(active_runs.ActiveRun, "_handle", busy)
    here = Socket(session_id, cookie)
    await here.open()
    await here.say("Weather?")
    await here.until("text.delta")
    there = OtherWorkerSocket(session_id, cookie)
    assert (await there.connect())[0]
    gate.set()
    frames = await frames_until_settled(there)
    assert delayed  # the first answer was late
    assert frames[0]["type"] == "history"  # the page did not wait for the answer
    assert shown_text(frames) == ANSWER, [(f["type"], f.get("seq")) for f in frames]


async def test_a_run_that_starts_during_a_catchup_on_the_previous_one_is_followed(
    cookie, session_id, conversation_pk, monkeypatch
):
    """The other worker's socket joins as the first run ends (it never answers); the
    next run starts before the catch-up times out, and must be followed all the same."""
    gate = asyncio.Event()
    chat_agent.script(
        streamed_reply("First answer.", gate=gate), streamed_reply(ANSWER, delay=0.05)
    )
    handle = active_runs.ActiveRun._handle

    async def ending(self: active_runs.ActiveRun, message: dict[str, Any]) -> None:
        if message.get("type") == "agent.catchup" and not gate.is_set():
            gate.set()  # the run goes on to its end without answering
            return
        await handle(self, message)

    monkeypatch.setattr(active_runs.ActiveRun, "_handle", ending)
    here = Socket(session_id, cookie)
    await here.open()
    await here.say("First")
    await here.until("text.delta")
    there = OtherWorkerSocket(session_id, cookie)
    assert (await there.connect())[0]
    await here.until("run.completed")
    await here.say("Second")
    second = await here.until("run.completed")
    assert text_of(second) == ANSWER
    frames = await until_the_end_of(there, second[-1]["run_id"])
    assert shown_text(frames) == ANSWER
