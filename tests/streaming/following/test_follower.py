"""``follower``: one tab's ``Follower`` with a real ``Visitor`` and ``SocketIO``, a
recording send, the real database and channel layer: opening a conversation sends its
history and joins its group; ``handle`` dispatches the layer's messages by type (and
ignores the others); ``close`` leaves every group and may be called twice; a tab open
on a new id waits, and gets the conversation's history once it is created elsewhere."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession
from django_agent_sessions.streaming.delivery import fanout, groups
from django_agent_sessions.streaming.delivery.socket_io import SocketIO
from django_agent_sessions.streaming.following.follower import Follower
from django_agent_sessions.streaming.visiting.visitor import Visitor
from tests.conftest import user_message

OpenTab = Callable[[str], Awaitable["Tab"]]

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


class Tab:
    """A follower with what its transport was asked to do: frames sent, restarts."""

    def __init__(self, visitor: Visitor) -> None:
        self.sent: list[dict[str, Any]] = []
        self.restarts = 0
        self.channel_name = f"test-follower.tab-{uuid.uuid4().hex}"
        self.follower = Follower(
            visitor,
            channel_name=self.channel_name,
            io=SocketIO(),
            send=self._send,
            restart=self._restart,
        )

    async def _send(self, frame: dict[str, Any]) -> None:
        self.sent.append(frame)

    async def _restart(self) -> None:
        self.restarts += 1

    async def received(self) -> dict[str, Any]:
        """The next message of the channel layer for this tab."""
        layer = self.follower.channel_layer
        return dict(await asyncio.wait_for(layer.receive(self.channel_name), 10))


@pytest.fixture
async def open_tab(alice: Any) -> AsyncIterator[OpenTab]:
    """``await open_tab(session_id)``: alice's tab on the id, as a consumer opens it."""
    tabs: list[Tab] = []

    async def open_on(session_id: str) -> Tab:
        visitor = Visitor(alice, session_id, scope={}, channel_layer=get_channel_layer())
        await visitor.find_conversation()
        tab = Tab(visitor)
        tabs.append(tab)
        await tab.follower.open()
        return tab

    yield open_on
    for tab in tabs:
        await tab.follower.close(tell_the_run=False)


async def stored_conversation(session_id: str, owner: Any) -> int:
    session = DjangoSession(session_id, owner=owner)
    await session.add_items([user_message("Hello"), user_message("Anyone there?")])
    return int((await AgentSession.objects.aget(session_id=session_id)).pk)


async def test_opening_a_conversation_sends_its_history_and_joins_its_group(
    alice: Any, session_id: str, open_tab: OpenTab
) -> None:
    pk = await stored_conversation(session_id, alice)
    tab = await open_tab(session_id)
    [frame] = tab.sent
    assert frame["type"] == "history"
    assert [item["text"] for item in frame["items"]] == ["Hello", "Anyone there?"]
    assert tab.follower.conversation_pk == pk
    assert fanout.is_local(tab.channel_name)  # this process's runs hand it their events
    message = {"type": "agent.event", "event": {"type": "run.started", "run_id": "r", "seq": 1}}
    await tab.follower.channel_layer.group_send(groups.group_name(pk), message)
    assert (await tab.received())["event"] == message["event"]
    assert tab.restarts == 0


async def test_messages_are_dispatched_by_type_and_unknown_ones_ignored(
    alice: Any, session_id: str, open_tab: OpenTab
) -> None:
    await stored_conversation(session_id, alice)
    tab = await open_tab(session_id)
    tab.sent.clear()
    await tab.follower.handle({"type": "agent.unknown", "event": {}})
    await tab.follower.handle({"event": {}})  # no type at all
    assert tab.sent == []
    event = {"type": "run.started", "run_id": "r", "seq": 1, "agent": "A"}
    await tab.follower.handle({"type": "agent.event", "event": event})
    assert tab.sent == [event]  # a run's event: relayed to the tab
    # A run asks who still watches it: the tab answers on the run's channel.
    asker = f"test-follower.run-{uuid.uuid4().hex}"
    await tab.follower.handle({"type": "agent.presence", "reply_to": asker})
    layer = tab.follower.channel_layer
    assert await asyncio.wait_for(layer.receive(asker), 10) == {"type": "agent.here"}


async def test_close_leaves_every_group_and_is_safe_twice(
    alice: Any, session_id: str, open_tab: OpenTab
) -> None:
    pk = await stored_conversation(session_id, alice)
    tab = await open_tab(session_id)
    layer = tab.follower.channel_layer
    run = f"test-follower.run-{uuid.uuid4().hex}"  # the conversation's run, listening
    await layer.group_add(groups.control_group_name(pk), run)
    await tab.follower.close(tell_the_run=True)
    await tab.follower.close(tell_the_run=True)
    assert tab.follower.io.gone
    assert not fanout.is_local(tab.channel_name)
    # Told once that a tab left (it then asks who still watches).
    await layer.send(run, {"type": "test.marker"})
    told = [await asyncio.wait_for(layer.receive(run), 10) for _ in range(2)]
    assert [m["type"] for m in told] == ["agent.left", "test.marker"]
    # Out of the conversation's group: its events no longer reach the tab.
    await layer.group_send(groups.group_name(pk), {"type": "agent.event", "event": {}})
    await layer.send(tab.channel_name, {"type": "test.marker"})
    assert (await tab.received())["type"] == "test.marker"
    await layer.group_discard(groups.control_group_name(pk), run)


async def test_a_tab_on_a_new_id_waits_and_gets_the_history_once_it_is_created(
    alice: Any, session_id: str, open_tab: OpenTab
) -> None:
    tab = await open_tab(session_id)
    [empty] = tab.sent
    assert (empty["type"], empty["items"], empty["last_item_id"]) == ("history", [], None)
    assert tab.follower.conversation_pk is None
    # Another worker's first message created it (and its run stored items already).
    pk = await stored_conversation(session_id, alice)
    await groups.announce_creation(
        tab.follower.channel_layer, session_id, alice.pk, pk, created=False
    )
    created = await tab.received()  # through the new id's pending group
    assert created == {"type": "agent.created", "conversation_pk": pk}
    await tab.follower.handle(created)
    assert tab.follower.conversation_pk == pk
    frame = tab.sent[-1]
    assert frame["type"] == "history"
    assert [item["text"] for item in frame["items"]] == ["Hello", "Anyone there?"]
    await tab.follower.handle(created)  # a second copy: joined already, nothing sent
    assert len(tab.sent) == 2
