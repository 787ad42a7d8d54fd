"""A run hands its events to its own process's sockets and uses the channel layer only
for what other workers need (``websocket.fanout``, ``websocket.inbox``).

A "remote" socket here is a channel in the conversation's group that is not a socket of
this process: what it receives is what a socket of another worker would receive. The
same protocol across real processes is tested in ``test_channel_layer`` (Redis) and by the
multi-worker daphne tests.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from channels.layers import get_channel_layer
from django.utils import timezone

from django_agent_sessions.models import AgentRun
from django_agent_sessions.streaming.delivery import fanout, groups
from django_agent_sessions.streaming.running import active_runs
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.websocket.fanout_helpers import (  # noqa: F401 - fixtures
    ANSWER,
    agent_settings,
    conversation_pk_fixture,
    cookie_fixture,
)
from tests.websockets import Socket, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

REMOTE = "remote-worker.socket"


async def remote_socket(conversation_pk: int) -> Any:
    layer = get_channel_layer()
    await layer.group_add(groups.group_name(conversation_pk), REMOTE)
    return layer


async def received_until_end(layer: Any, channel: str) -> list[dict[str, Any]]:
    """The layer messages of ``channel`` up to the run's second terminal event."""
    messages: list[dict[str, Any]] = []
    ends = 0
    while ends < 2:
        message = await asyncio.wait_for(layer.receive(channel), 5)
        messages.append(message)
        ends += message["event"]["type"] in active_runs.TERMINAL_EVENTS
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
        groups.control_group_name(conversation_pk),
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


class _RefusingLayer:
    """A channel layer whose Redis is down: every ``group_send`` raises."""

    def __init__(self) -> None:
        self.sends = 0

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.sends += 1
        raise ConnectionError("Connection closed by server")


async def test_a_layer_that_refuses_every_copy_is_logged_and_stops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Both copies of a run's start are tried (each once more, ``layer.retrying``), at
    once; their failures are logged as one warning, and the caller goes on."""
    layer = _RefusingLayer()
    event = {"type": "run.started", "run_id": "r", "seq": 1}
    await fanout.broadcast(layer, "group", 1, event, copies=2)
    assert layer.sends == 4
    published = [r for r in caplog.records if "Could not publish run.started" in r.message]
    assert len(published) == 1
