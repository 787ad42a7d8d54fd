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
from typing import Any

import pytest
from channels.layers import get_channel_layer

from django_agent_sessions.models import AgentSession
from django_agent_sessions.websocket import fanout, inbox, runs
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.websockets import Socket, close_all_sockets, login_cookie, text_of

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "Fog over the harbour this morning, clearing to a bright and windy afternoon."
REMOTE = "remote-worker.socket"


@pytest.fixture(autouse=True)
async def _close_sockets():
    yield
    await close_all_sockets()


@pytest.fixture(autouse=True)
def agent_settings(settings):
    settings.AGENT_SESSIONS = {
        "AGENT": "tests.chat_agent.make_agent",
        "RATE_LIMIT": None,
        "DELTA_FLUSH_SECONDS": 0.01,
    }
    chat_agent.tool_gate = None


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def cookie(alice) -> bytes:
    return login_cookie(alice)


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
    assert [m["event"]["type"] for m in remote] == ["run.started", *["run.completed"] * 2]
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
    assert [m["event"]["type"] for m in remote] == ["run.started", *["run.completed"] * 2]


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


class _Receiver(inbox.InboxMixin):
    """The inbox alone, on a channel layer receive given by the test."""

    channel_name = "test.inbox"

    def __init__(self, receive: Any) -> None:
        self.channel_receive = receive

    async def _receive_from_layer(self) -> Any:
        return await self._layer_receive()


async def test_the_inbox_dispatches_layer_and_local_messages_in_arrival_order():
    layer_messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    receiver = _Receiver(layer_messages.get)
    receiver.deliver_local({"n": 1})
    await layer_messages.put({"n": 2})
    first = await receiver.channel_receive()
    second = await receiver.channel_receive()
    receiver.deliver_local({"n": 3})
    assert [first, second, await receiver.channel_receive()] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert receiver._pump is not None
    receiver._pump.cancel()


async def test_a_full_inbox_drops_instead_of_growing():
    receiver = _Receiver(asyncio.Event().wait)
    for n in range(inbox.INBOX_CAPACITY + 5):
        receiver.deliver_local({"n": n})
    assert receiver._open_inbox().qsize() == inbox.INBOX_CAPACITY


async def test_a_failing_layer_receive_fails_the_consumer_as_before():
    async def broken() -> Any:
        raise ConnectionError("Connection closed by server")

    receiver = _Receiver(broken)
    with pytest.raises(ConnectionError):
        await receiver.channel_receive()
