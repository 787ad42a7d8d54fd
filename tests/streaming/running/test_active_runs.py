"""``runs``: an ``ActiveRun`` on the real SDK ``Runner`` (a scripted model), its record in
the database and the test run's channel layer: what it publishes (to this process's
sockets directly, and to its event log) and what it does with the control messages of
its conversation (``cancel``, ``catchup``, ``replay``, ``left``)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.streaming.delivery import fanout, groups
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.streaming.running.streamed_run import StreamedRun
from tests.scripted import ScriptedModel, streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)

REPLY = "A reply in several small pieces, to be published one by one."


class Harness:
    """One conversation, a socket of this process watching it, and its runs."""

    def __init__(self, pk: int, session_id: str) -> None:
        self.pk, self.session_id = pk, session_id
        self.layer = get_channel_layer()
        # A socket of this process (``fanout.watch``), and a channel of no socket here:
        # another worker's. Named per test: a channel layer's queues outlive a test.
        self.local_channel = f"test-active_runs.local-{uuid.uuid4().hex}"
        self.remote = f"test-active_runs.remote-{uuid.uuid4().hex}"
        self.local: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        fanout.watch(pk, self.local_channel, self.local.put_nowait)
        self.active: list[active_runs.ActiveRun] = []

    async def run(self, gate: asyncio.Event | None = None) -> active_runs.ActiveRun:
        """A joined run (listening for control messages) whose model waits on ``gate``."""
        agent = Agent(name="A", model=ScriptedModel([streamed_reply(REPLY, gate=gate)]))
        started = await store_runs.start(self.pk, agent_name="A", lease_seconds=60)
        assert started is not None
        streamed = StreamedRun(
            agent, "Hi", run_id=started.run_id, session=DjangoSession(self.session_id)
        )
        active = active_runs.ActiveRun(
            streamed, started, session_pk=self.pk, channel_layer=self.layer, user=None
        )
        await active.join()
        self.active.append(active)
        return active

    async def control(self, message: dict[str, Any]) -> None:
        await self.layer.group_send(groups.control_group_name(self.pk), message)

    async def answer(self) -> dict[str, Any]:
        """The next message to the other worker's channel."""
        return dict(await asyncio.wait_for(self.layer.receive(self.remote), 10))

    async def local_until(self, kind: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        while not events or events[-1]["type"] != kind:
            events.append((await asyncio.wait_for(self.local.get(), 10))["event"])
        return events


@pytest.fixture
async def harness(session_id: str) -> AsyncIterator[Harness]:
    conversation = await AgentSession.objects.acreate(session_id=session_id)
    harness = Harness(int(conversation.pk), session_id)
    yield harness
    fanout.unwatch(harness.local_channel)
    for active in harness.active:
        await active.leave()


async def test_a_run_publishes_in_order_to_its_sockets_and_its_log(harness: Harness) -> None:
    active = await harness.run()
    assert active_runs.local_run(harness.pk) is active  # a busy conversation starts nothing else
    terminal = await active.stream()
    published = [(await harness.local.get())["event"] for _ in range(harness.local.qsize())]
    assert [e["seq"] for e in published] == list(range(1, len(published) + 1))
    assert published[0] == {"type": "run.started", "run_id": active.run_id, "seq": 1, "agent": "A"}
    assert "".join(e["delta"] for e in published if e["type"] == "text.delta") == REPLY
    # The terminal event is returned, not published: ``lifecycle`` records it first.
    assert terminal is not None
    assert (terminal["type"], terminal["seq"]) == ("run.completed", len(published) + 1)
    assert active.log.after(0) == published  # what a tab that resumes can be sent
    assert active.log.after(3) == published[3:]
    await active.leave()
    assert active_runs.local_run(harness.pk) is None


async def test_a_catchup_after_the_end_is_numbered_is_not_told_its_seq(harness: Harness) -> None:
    # ``lifecycle`` records the end before it publishes it: a tab told the end's seq in
    # between would drop the end when it comes, as one it had shown.
    active = await harness.run()
    terminal = await active.stream()
    assert terminal is not None
    await harness.control({"type": "agent.catchup", "reply_to": harness.remote})
    snapshot = (await harness.answer())["snapshot"]
    assert snapshot["seq"] == active.log.last_seq == terminal["seq"] - 1


async def test_a_cancel_for_another_run_is_ignored(harness: Harness) -> None:
    gate = asyncio.Event()
    active = await harness.run(gate)
    task = asyncio.create_task(active.stream())
    await harness.local_until("text.delta")
    await harness.control({"type": "agent.cancel", "run_id": "another-run"})
    # Two round trips through the control channel: the cancel sent before them is handled.
    for _ in range(2):
        await harness.control({"type": "agent.replay", "reply_to": harness.remote, "after": 0})
        assert (await harness.answer())["type"] == "agent.replayed"
    gate.set()
    terminal = await task
    assert terminal is not None
    assert terminal["type"] == "run.completed"


async def test_a_cancel_replay_and_catchup_from_another_worker(harness: Harness) -> None:
    active = await harness.run(asyncio.Event())  # the model stops after its first token
    task = asyncio.create_task(active.stream())
    shown = await harness.local_until("text.delta")
    await harness.control({"type": "agent.replay", "reply_to": harness.remote, "after": 1})
    replayed = await harness.answer()
    assert replayed == {"type": "agent.replayed", "run_id": active.run_id, "events": shown[1:]}
    assert active.followed  # another worker's tab follows it: every event goes through the layer
    await harness.control({"type": "agent.catchup", "reply_to": harness.remote})
    snapshot = (await harness.answer())["snapshot"]
    assert (snapshot["run_id"], snapshot["seq"]) == (active.run_id, shown[-1]["seq"])
    assert snapshot["text"] == shown[-1]["delta"]
    assert snapshot["history_item_id"] == active.started.history_item_id
    await harness.control({"type": "agent.cancel", "run_id": active.run_id})
    terminal = await task
    assert terminal is not None
    assert terminal["type"] == "run.cancelled"


async def test_a_run_nobody_watches_any_more_cancels_itself(
    harness: Harness, settings: Any
) -> None:
    settings.AGENT_SESSIONS = {"PRESENCE_TIMEOUT_SECONDS": 0.05}
    await harness.layer.group_add(groups.group_name(harness.pk), harness.remote)
    active = await harness.run(asyncio.Event())
    task = asyncio.create_task(active.stream())
    await harness.local_until("text.delta")
    await harness.control({"type": "agent.left"})
    questions: list[dict[str, Any]] = []
    while len(questions) < 2:  # asked twice: one lost question must not cancel the run
        message = await harness.answer()
        if message["type"] == "agent.presence":
            questions.append(message)
    [reply_to] = {q["reply_to"] for q in questions}  # the run's own control channel
    assert reply_to.startswith("agent_sessions.run.")
    terminal = await task  # nobody answered within PRESENCE_TIMEOUT_SECONDS
    assert terminal is not None
    assert terminal["type"] == "run.cancelled"
    await harness.layer.group_discard(groups.group_name(harness.pk), harness.remote)
