"""A run hands its events to its own process's sockets and uses the channel layer only
for what other workers need (``websocket.fanout``, ``websocket.inbox``).

A "remote" socket here is a channel in the conversation's group that is not a socket of
this process: what it receives is what a socket of another worker would receive. The
same protocol across real processes is tested in ``test_channel_layer`` (Redis) and by the
multi-worker daphne tests.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from channels.auth import AuthMiddlewareStack
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from channels.testing import WebsocketCommunicator
from django.urls import path
from django.utils import timezone

from django_agent_sessions.conf import app_settings
from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.websocket import fanout, runs, socket_io
from django_agent_sessions.websocket.consumer import AgentSessionConsumer
from django_agent_sessions.websocket.socket_io import SocketIO
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.websockets import ORIGIN, Socket, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

ANSWER = "Fog over the harbour this morning, clearing to a bright and windy afternoon."
REMOTE = "remote-worker.socket"


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_agent")


@pytest.fixture
def cookie(alice_cookie: bytes) -> bytes:
    return alice_cookie


@pytest.fixture
def conversation_pk(alice, session_id) -> int:
    return int(AgentSession.objects.create(session_id=session_id, owner=alice).pk)


async def remote_socket(conversation_pk: int) -> Any:
    layer = get_channel_layer()
    await layer.group_add(runs.group_name(conversation_pk), REMOTE)
    return layer


async def received_until_end(layer: Any, channel: str) -> list[dict[str, Any]]:
    """The layer messages of ``channel`` up to the run's second terminal event."""
    messages: list[dict[str, Any]] = []
    ends = 0
    while ends < 2:
        message = await asyncio.wait_for(layer.receive(channel), 5)
        messages.append(message)
        ends += message["event"]["type"] in runs.TERMINAL_EVENTS
    return messages


async def test_without_a_follower_elsewhere_only_the_start_and_end_use_the_layer(
    cookie, session_id, conversation_pk
):
    chat_agent.script(streamed_reply(ANSWER))
    layer = await remote_socket(conversation_pk)
    socket = Socket(session_id, cookie)
    await socket.open()
    await socket.say("Weather?")
    seen = await socket.until("run.completed")
    assert text_of(seen) == ANSWER  # the socket of this process got every event
    remote = await received_until_end(layer, REMOTE)
    # Each twice: the layer may lose a message, and a socket drops the copy by seq.
    assert [m["event"]["type"] for m in remote] == [*["run.started"] * 2, *["run.completed"] * 2]
    assert {(m["origin"], m["followed"]) for m in remote} == {(fanout.ORIGIN, False)}
    assert await socket.nothing_more()  # the layer's copies of its own events are dropped


async def test_a_catchup_from_elsewhere_makes_the_run_publish_every_later_event(
    cookie, session_id, conversation_pk
):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=gate))
    layer = await remote_socket(conversation_pk)
    socket = Socket(session_id, cookie)
    await socket.open()
    await socket.say("Weather?")
    before = await socket.until("text.delta")
    for _copy in range(2):
        started = await asyncio.wait_for(layer.receive(REMOTE), 5)
        assert (started["event"]["type"], started["followed"]) == ("run.started", False)

    # What a socket of another worker does on an unfollowed run.started.
    await layer.group_send(
        runs.control_group_name(conversation_pk),
        {"type": "agent.catchup", "reply_to": REMOTE},
    )
    snapshot = (await asyncio.wait_for(layer.receive(REMOTE), 5))["snapshot"]
    gate.set()
    after = await received_until_end(layer, REMOTE)
    events = [m["event"] for m in after]
    # Nothing missed, nothing twice: every event after the snapshot, in order.
    sequence = [event["seq"] for event in events[:-1]]
    assert sequence == list(range(snapshot["seq"] + 1, sequence[-1] + 1))
    assert {m["followed"] for m in after} == {True}
    assert snapshot["text"] + text_of(events) == ANSWER
    assert text_of(before + await socket.until("run.completed")) == ANSWER


async def test_a_socket_of_this_process_catching_up_does_not_make_the_run_followed(
    cookie, session_id, conversation_pk
):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=gate))
    layer = await remote_socket(conversation_pk)
    first = Socket(session_id, cookie)
    await first.open()
    await first.say("Weather?")
    before = await first.until("text.delta")
    late = Socket(session_id, cookie)
    history = await late.open()  # mid-run: a catch-up, through the layer's control group
    active = history["active_run"]
    assert active["run_id"] == before[0]["run_id"]
    gate.set()
    after = await late.until("run.completed")
    assert after[0]["seq"] == active["seq"] + 1
    assert active["text"] + text_of(after) == ANSWER
    remote = await received_until_end(layer, REMOTE)
    assert [m["event"]["type"] for m in remote] == [*["run.started"] * 2, *["run.completed"] * 2]


async def test_a_forked_process_has_an_origin_and_sockets_of_its_own():
    fanout.watch(1, "parent.socket", lambda message: None)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running the parent's cleanup
        child = f"{fanout.ORIGIN} {fanout.is_local('parent.socket')}"
        os.write(write_end, child.encode())
        os._exit(0)
    os.close(write_end)
    try:
        origin, local = os.read(read_end, 200).decode().split()
        os.waitpid(pid, 0)
        assert origin != fanout.ORIGIN
        assert local == "False"
        assert fanout.is_local("parent.socket")
    finally:
        os.close(read_end)
        fanout.unwatch("parent.socket")


def test_a_layer_message_is_ours_only_with_this_process_origin():
    assert fanout.from_this_process({"origin": fanout.ORIGIN, "event": {}})
    assert not fanout.from_this_process({"origin": "another-process", "event": {}})
    assert not fanout.from_this_process({"event": {}})  # messages of other publishers


def test_a_socket_that_cannot_take_an_event_is_forgotten_and_others_still_get_it():
    got: list[dict[str, Any]] = []

    def closed(message: dict[str, Any]) -> None:
        raise RuntimeError("Event loop is closed")

    fanout.watch(7, "closed.socket", closed)
    fanout.watch(7, "open.socket", got.append)
    try:
        fanout.deliver(7, {"type": "agent.event", "event": {"seq": 1}})
        assert got == [{"type": "agent.event", "event": {"seq": 1}}]
        assert not fanout.is_local("closed.socket")
        assert fanout.is_local("open.socket")
    finally:
        fanout.unwatch("open.socket")
    assert not fanout.is_local("open.socket")


def _Receiver(receive: Any) -> SocketIO:
    """The inbox alone, on a channel layer receive given by the test."""
    io = SocketIO()
    io.layer_receive = receive
    return io


async def test_the_inbox_dispatches_layer_and_local_messages_in_arrival_order():
    layer_messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    receiver = _Receiver(layer_messages.get)
    receiver.deliver_local({"n": 1})
    await layer_messages.put({"n": 2})
    first = await receiver.next_message()
    second = await receiver.next_message()
    receiver.deliver_local({"n": 3})
    assert [first, second, await receiver.next_message()] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert receiver._pump is not None
    receiver._pump.cancel()


def _delta(seq: int) -> dict[str, Any]:
    return {"type": "agent.event", "event": {"type": "text.delta", "seq": seq, "delta": "x"}}


async def test_a_full_inbox_drops_text_deltas_and_keeps_everything_else():
    receiver = _Receiver(asyncio.Event().wait)
    for seq in range(socket_io.INBOX_CAPACITY + 5):
        receiver.deliver_local(_delta(seq))
    assert receiver.pending == socket_io.INBOX_CAPACITY
    end = {"type": "agent.event", "event": {"type": "run.completed", "seq": 10**6}}
    receiver.deliver_local(end)
    receiver.deliver_local({"type": "agent.snapshot", "snapshot": {}})
    assert receiver.pending == socket_io.INBOX_CAPACITY + 2


async def test_a_run_on_another_threads_event_loop_wakes_the_socket():
    receiver = _Receiver(asyncio.Event().wait)
    waiting = asyncio.ensure_future(receiver.next_message())
    await asyncio.sleep(0.01)  # the socket waits on its inbox
    release = threading.Event()

    def other_loop() -> None:
        async def publish() -> None:
            receiver.deliver_local(_delta(1))

        asyncio.run(publish())
        release.wait(5)  # nothing else may wake the socket's event loop meanwhile

    thread = threading.Thread(target=other_loop)
    started = time.monotonic()
    thread.start()
    try:
        assert await asyncio.wait_for(waiting, 10) == _delta(1)
        # Woken by the delivery, not by the next thing that happened to wake the loop
        # (here the 10 s timeout: an asyncio queue woken from another thread is not).
        assert time.monotonic() - started < 5
    finally:
        release.set()
        thread.join()
    assert receiver._pump is not None
    receiver._pump.cancel()


# A socket of another worker, simulated in this process: it is not in this process's
# registry (runs see it as remote), and it does not recognise this process's origin.


class _RemoteIO(SocketIO):
    def watch(self, conversation_pk: int, channel_name: str) -> None:
        pass  # not in this process's registry: runs see the socket as remote


class OtherWorkerConsumer(AgentSessionConsumer):
    io_class = _RemoteIO

    async def agent_event(self, message: dict[str, Any]) -> None:
        await super().agent_event({k: v for k, v in message.items() if k != "origin"})


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
    handle = runs.ActiveRun._handle
    delayed: list[str] = []

    async def busy(self: runs.ActiveRun, message: dict[str, Any]) -> None:
        if message.get("type") == "agent.catchup" and not delayed:
            delayed.append(message["reply_to"])
            await asyncio.sleep(app_settings.CATCHUP_TIMEOUT_SECONDS + 0.3)
        await handle(self, message)

    monkeypatch.setattr(runs.ActiveRun, "_handle", busy)
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
    handle = runs.ActiveRun._handle

    async def ending(self: runs.ActiveRun, message: dict[str, Any]) -> None:
        if message.get("type") == "agent.catchup" and not gate.is_set():
            gate.set()  # the run goes on to its end without answering
            return
        await handle(self, message)

    monkeypatch.setattr(runs.ActiveRun, "_handle", ending)
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
    frames = await there.until("run.completed", timeout=10)
    while frames[-1]["run_id"] != second[-1]["run_id"]:
        frames += await there.until("run.completed", timeout=10)
    assert shown_text(frames) == ANSWER


async def test_a_lost_run_is_announced_before_the_next_run_starts(
    cookie, session_id, conversation_pk
):
    """start_run finds the previous run's worker gone: this process's sockets hear of
    that run's end before anything of the new one (the page shows the new one busy)."""
    lost = await AgentRun.objects.acreate(
        session_id=conversation_pk,
        agent_name="Assistant",
        lease_expires_at=timezone.now() - timedelta(seconds=1),
    )
    chat_agent.script(streamed_reply(ANSWER))
    socket = Socket(session_id, cookie)
    await socket.open()
    await socket.say("Weather?")
    frames = await socket.until("run.completed")
    kinds = [(frame["type"], frame.get("run_id") == str(lost.run_id)) for frame in frames]
    assert kinds[:2] == [("run.failed", True), ("run.started", False)]
