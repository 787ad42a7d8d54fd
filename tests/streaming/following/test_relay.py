"""``relay``: one tab's ``Relay``, driven directly with a recording tab (the module's own
``Socket`` protocol), the real database and channel layer: the history frame of a
conversation with no run, a run's events put back in order, its end shown once, and
the catch-up of a tab that opens mid-run (events held until the run's snapshot; on a
timeout, the stored history; a snapshot too late for a run the tab saw end ignored).
Timers are called directly (``on_check``, ``on_catchup_timeout``) or set far off."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents.usage import Usage
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.streaming.delivery import groups
from django_agent_sessions.streaming.following.relay import Relay
from tests.conftest import user_message

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


class Tab:
    """A tab as the relay reads it (``relay.Socket``): what it was sent, and woken with."""

    def __init__(self, pk: int) -> None:
        self.channel_layer = get_channel_layer()
        self.channel_name = f"test-relay.tab-{uuid.uuid4().hex}"
        self.pk = pk
        self.sent: list[dict[str, Any]] = []
        self.woken: list[dict[str, Any]] = []

    @property
    def conversation_pk(self) -> int | None:
        return self.pk

    @property
    def user(self) -> Any:
        return None

    async def send_json(self, content: Any) -> None:
        self.sent.append(content)

    def wake(self, message: dict[str, Any]) -> None:
        self.woken.append(message)


class Conversation:
    """A stored conversation, a tab's relay on it, and a channel in its run's group (to
    see what the tab asks the run)."""

    def __init__(self, pk: int, session_id: str) -> None:
        self.pk, self.session_id = pk, session_id
        self.tab = Tab(pk)
        self.relay = Relay(self.tab)
        self.layer = self.tab.channel_layer
        self.run_channel = f"test-relay.run-{uuid.uuid4().hex}"

    async def listen_as_the_run(self) -> None:
        await self.layer.group_add(groups.control_group_name(self.pk), self.run_channel)

    async def asked(self) -> dict[str, Any]:
        """The next question the tab asked the conversation's run."""
        return dict(await asyncio.wait_for(self.layer.receive(self.run_channel), 10))

    async def start_run(self) -> store_runs.StartedRun:
        started = await store_runs.start(self.pk, agent_name="A", lease_seconds=60)
        assert started is not None
        return started

    async def event(self, run_id: str, seq: int, kind: str = "text.delta", **more: Any) -> None:
        """An event of a run of another worker, through the layer, as the tab gets it."""
        event = {"type": kind, "run_id": run_id, "seq": seq, **more}
        await self.relay.on_event({"type": "agent.event", "event": event, "followed": True})

    def shown(self) -> list[tuple[str, int]]:
        return [(e["type"], e["seq"]) for e in self.tab.sent if e["type"] != "history"]


@pytest.fixture
async def conversation(settings: Any, session_id: str) -> AsyncIterator[Conversation]:
    # Timers far off: a test calls the handlers they would wake itself.
    settings.AGENT_SESSIONS = {
        "CATCHUP_TIMEOUT_SECONDS": 60,
        "FOLLOW_CHECK_SECONDS": 60,
        "GAP_TIMEOUT_SECONDS": 60,
    }
    await DjangoSession(session_id).add_items([user_message("Hello")])
    record = await AgentSession.objects.aget(session_id=session_id)
    conversation = Conversation(int(record.pk), session_id)
    yield conversation
    conversation.relay.stop()
    await conversation.layer.group_discard(
        groups.control_group_name(conversation.pk), conversation.run_channel
    )


def snapshot(started: store_runs.StartedRun, seq: int, text: str = "") -> dict[str, Any]:
    """What the run answers a catch-up with (``runs.ActiveRun.snapshot``)."""
    return {
        "run_id": started.run_id,
        "seq": seq,
        "items": [],
        "text": text,
        "item_seqs": [],
        "text_seq": seq if text else 0,
        "history_item_id": started.history_item_id,
    }


async def test_a_conversation_with_no_run_gets_its_history_frame(
    conversation: Conversation,
) -> None:
    await conversation.relay.send_history()
    [frame] = conversation.tab.sent
    assert frame["type"] == "history"
    assert [item["text"] for item in frame["items"]] == ["Hello"]
    assert (frame["active_run"], frame["pending_approvals"]) == (None, [])
    assert conversation.relay.watch.live is None  # nothing to follow, nothing to check


async def test_events_are_put_back_in_order_each_shown_once(conversation: Conversation) -> None:
    await conversation.relay.send_history()
    conversation.tab.sent.clear()
    run_id = str(uuid.uuid4())
    for seq in (1, 3, 2, 2, 5):  # swapped by the layer, a copy, and 4 not there yet
        await conversation.event(run_id, seq, "run.started" if seq == 1 else "text.delta")
    assert conversation.shown() == [("run.started", 1), ("text.delta", 2), ("text.delta", 3)]
    await conversation.event(run_id, 4)
    assert conversation.shown()[3:] == [("text.delta", 4), ("text.delta", 5)]
    assert conversation.relay.watch.live == run_id


async def test_a_gap_that_stays_open_is_filled_from_the_runs_snapshot(
    conversation: Conversation,
) -> None:
    await conversation.listen_as_the_run()
    await conversation.relay.send_history()
    conversation.tab.sent.clear()
    started = await conversation.start_run()  # of another worker: none runs in this process
    await conversation.event(started.run_id, 1, "run.started")
    await conversation.event(started.run_id, 3, delta="c")  # 2 was lost
    # The gap's timer would wake this check: the tab asks the run where it stands.
    await conversation.relay.on_check(
        {"type": "agent.check", "run_id": started.run_id, "gap": True}
    )
    reply_to = conversation.tab.channel_name
    assert await conversation.asked() == {"type": "agent.catchup", "reply_to": reply_to}
    await conversation.relay.on_snapshot(snapshot(started, 2, text="ab"))
    first, frame, third = conversation.tab.sent
    assert (first["type"], frame["type"], third["seq"]) == ("run.started", "history", 3)
    assert (frame["active_run"]["seq"], frame["active_run"]["text"]) == (2, "ab")


async def test_a_runs_end_is_shown_once_and_nothing_of_the_run_after_it(
    conversation: Conversation,
) -> None:
    await conversation.relay.send_history()
    run_id = str(uuid.uuid4())
    await conversation.event(run_id, 1, "run.started")
    await conversation.event(run_id, 2, "run.completed")
    assert conversation.relay.watch.live is None  # an ended run is not checked on
    await conversation.event(run_id, 2, "run.completed")  # the layer's second copy
    await conversation.event(run_id, 1, "run.failed")  # a lost worker's end, numbered early
    await conversation.event(run_id, 3, delta="late")
    assert conversation.shown() == [("run.started", 1), ("run.completed", 2)]


async def test_a_tab_opening_mid_run_holds_its_events_until_the_runs_snapshot(
    conversation: Conversation,
) -> None:
    await conversation.listen_as_the_run()
    started = await conversation.start_run()
    await conversation.relay.send_history()
    reply_to = conversation.tab.channel_name
    assert await conversation.asked() == {"type": "agent.catchup", "reply_to": reply_to}
    assert conversation.tab.sent == []  # no history yet: it would lack the run
    await conversation.event(started.run_id, 3, delta="lo")  # published before the answer
    await conversation.event(started.run_id, 4, delta=" there")
    assert conversation.tab.sent == []
    await conversation.relay.on_snapshot(snapshot(started, 3, text="Hello"))
    frame, *events = conversation.tab.sent
    assert frame["type"] == "history"
    assert [item["text"] for item in frame["items"]] == ["Hello"]  # before the run only
    assert frame["active_run"] == {
        "run_id": started.run_id,
        "seq": 3,
        "items": [],
        "text": "Hello",
    }
    # Seq 3 was in the snapshot: only what came after it is shown, once.
    assert [(e["seq"], e["delta"]) for e in events] == [(4, " there")]
    assert conversation.relay.watch.live == started.run_id
    await conversation.relay.on_snapshot(snapshot(started, 3, text="Hello"))  # a second answer
    assert len(conversation.tab.sent) == 2


async def test_a_catchup_timeout_with_the_run_ended_sends_the_stored_history(
    conversation: Conversation,
) -> None:
    started = await conversation.start_run()
    await conversation.relay.send_history()
    await conversation.event(started.run_id, 2, delta="Hel")  # held for the answer
    # The run ended before it answered (its end went to the tabs that followed it).
    await store_runs.finish(started.pk, status="cancelled", usage=Usage(), partial_text="Hel")
    await conversation.relay.on_catchup_timeout()
    [frame] = conversation.tab.sent  # what was held is part of the stored run
    assert (frame["type"], frame["active_run"]) == ("history", None)
    assert (frame["items"][-1]["text"], frame["items"][-1]["status"]) == ("Hel", "cancelled")
    await conversation.relay.on_catchup_timeout()  # a second timer: nothing waits for it
    # The run's answer comes after all (it was busy): the tab showed its end already.
    await conversation.relay.on_snapshot(snapshot(started, 4, text="Hel"))
    assert conversation.tab.sent == [frame]


async def test_the_timeout_of_an_earlier_catchup_is_not_taken_for_the_next_ones(
    conversation: Conversation,
) -> None:
    """A timeout already in the tab's inbox when the next catch-up was asked (a snapshot
    answered the first) must not count as the second's: no question is asked again."""
    await conversation.listen_as_the_run()
    started = await conversation.start_run()
    await conversation.relay.send_history()  # catch-up round 1
    assert (await conversation.asked())["type"] == "agent.catchup"
    await conversation.relay.on_snapshot(snapshot(started, 2, text="Hi"))
    await conversation.relay.on_check({"run_id": started.run_id})  # silence: round 2
    assert (await conversation.asked())["type"] == "agent.catchup"
    sent = len(conversation.tab.sent)
    await conversation.relay.on_catchup_timeout(1)  # round 1's timer, fired late
    await conversation.layer.send(conversation.run_channel, {"type": "marker"})
    assert (await conversation.asked())["type"] == "marker"  # not a third question
    await conversation.relay.on_snapshot(snapshot(started, 2, text="Hi"))  # nothing missed
    assert len(conversation.tab.sent) == sent


async def test_a_catchup_holding_too_many_events_drops_text_never_the_end(
    conversation: Conversation,
) -> None:
    started = await conversation.start_run()
    await conversation.relay.send_history()  # a catch-up: events are held
    for seq in range(3, 1004):  # a thousand and one deltas: one past the cap
        await conversation.event(started.run_id, seq, delta="x")
    await conversation.event(started.run_id, 1004, "run.completed")
    await conversation.relay.on_snapshot(snapshot(started, 2))
    assert conversation.shown()[-1] == ("text.delta", 1002)  # the end waits behind 1003
    # The gap check asks the run, whose answer covers the dropped delta: the end shows.
    await conversation.relay.on_check({"run_id": started.run_id, "gap": True})
    await conversation.relay.on_snapshot(snapshot(started, 1003, text="x" * 1001))
    assert conversation.shown()[-1] == ("run.completed", 1004)


async def test_a_check_answered_after_the_events_it_held_shows_them_and_no_history(
    conversation: Conversation,
) -> None:
    # A run silent for a while (its model is slow) is checked on; its next events come
    # before its answer and are held: they fill everything up to it, nothing was missed.
    await conversation.listen_as_the_run()
    started = await conversation.start_run()
    await conversation.relay.send_history()
    await conversation.asked()  # the catch-up of a tab that opens mid-run
    await conversation.relay.on_snapshot(snapshot(started, 2, text="Hi"))
    conversation.tab.sent.clear()
    await conversation.relay.on_check({"type": "agent.check", "run_id": started.run_id})
    assert (await conversation.asked())["type"] == "agent.catchup"
    await conversation.event(started.run_id, 3, delta=" th")
    await conversation.event(started.run_id, 4, delta="ere")
    await conversation.relay.on_snapshot(snapshot(started, 4, text="Hi there"))
    assert conversation.shown() == [("text.delta", 3), ("text.delta", 4)]
    assert [frame["type"] for frame in conversation.tab.sent] == ["text.delta", "text.delta"]


async def test_a_snapshot_of_a_run_whose_end_is_recorded_sends_the_stored_history(
    conversation: Conversation,
) -> None:
    # A run records its end, then publishes it: a snapshot taken in between must not
    # show the run as going on (the tab would then drop its end as one it showed).
    await conversation.listen_as_the_run()
    started = await conversation.start_run()
    await conversation.relay.send_history()
    await conversation.asked()
    await store_runs.finish(started.pk, status="cancelled", usage=Usage(), partial_text="Hel")
    await conversation.relay.on_snapshot(snapshot(started, 3, text="Hel"))
    [frame] = conversation.tab.sent
    assert (frame["type"], frame["active_run"]) == ("history", None)
    assert (frame["items"][-1]["text"], frame["items"][-1]["status"]) == ("Hel", "cancelled")
    await conversation.event(started.run_id, 4, "run.cancelled")  # the end, on its way
    assert conversation.tab.sent == [frame]
