"""A socket's groups (``websocket.groups``): told of a new conversation by its own process
directly, by other workers through the layer."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass, field
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions.layers.local import LocalChannelLayer
from django_agent_sessions.streaming.delivery import fanout, groups
from django_agent_sessions.streaming.delivery.groups import Groups
from django_agent_sessions.streaming.delivery.socket_io import SocketIO
from tests.conversations import make_conversation

# Waiting on a new id looks the conversation up once more (created meanwhile?).
pytestmark = pytest.mark.django_db(transaction=True)

SESSION_ID = "a-new-conversation"
EVENT = {"type": "agent.event", "event": {"type": "run.started", "run_id": "r", "seq": 0}}


@dataclass
class Tab:
    """A socket waiting on a new id: its layer, channel, inbox and groups."""

    channel_layer: Any
    channel_name: str
    io: SocketIO = field(default_factory=SocketIO)

    def __post_init__(self) -> None:
        self.io.layer_receive = functools.partial(self.channel_layer.receive, self.channel_name)
        self.membership = Groups(self, self.io)

    async def next(self) -> dict[str, Any]:
        return dict(await asyncio.wait_for(self.io.next_message(), 5))


async def waiting(layer: Any, channel_name: str = "tab-1", owner_id: int = 7) -> Tab:
    """A tab of ``owner_id`` waiting on the new id ``SESSION_ID``."""
    tab = Tab(layer, channel_name)
    assert await tab.membership.wait_for_creation(SESSION_ID, owner_id=owner_id) is None
    return tab


async def test_a_creation_here_reaches_the_tab_before_any_event_of_its_run():
    layer = LocalChannelLayer()
    tab = await waiting(layer)
    await groups.announce_creation(layer, SESSION_ID, 7, 42, created=True)
    fanout.deliver(42, EVENT)  # the run's first event, handed over at once
    created = await tab.next()
    assert created == {"type": "agent.created", "conversation_pk": 42, "here": True}
    assert groups.joined_from_start(created)
    assert await tab.next() == EVENT
    # The layer's copy follows; the tab, joined by then, ignores it.
    assert groups.joined_from_start(await tab.next()) is False
    await tab.membership.leave(tell_the_run=False)
    tab.io.close()


async def test_a_creation_here_for_a_task_puts_the_tab_in_the_group_before_the_run():
    """A task's run publishes through the layer only (its worker is another process, or
    a thread apart): the tab is in the conversation's group before the run is enqueued,
    so the run's first event, sent at once, reaches it though the tab's inbox has not
    yet handled the creation."""
    layer = LocalChannelLayer()
    tab = await waiting(layer)
    await groups.announce_creation(layer, SESSION_ID, 7, 42, created=True, offloaded=True)
    await layer.group_send(groups.group_name(42), EVENT)  # the task's first event
    assert groups.joined_from_start(await tab.next())
    assert groups.joined_from_start(await tab.next()) is False  # the layer's copy
    assert await tab.next() == EVENT
    await tab.membership.join(42)  # the inbox's creation, handled: joining again is harmless
    await tab.membership.leave(tell_the_run=False)
    tab.io.close()


async def test_another_workers_creation_asks_for_a_catch_up():
    layer = LocalChannelLayer()
    tab = await waiting(layer)
    await layer.group_send(
        groups.pending_group_name(SESSION_ID, 7),
        {"type": "agent.created", "conversation_pk": 42},
    )
    assert groups.joined_from_start(await tab.next()) is False
    assert not fanout.is_local("tab-1")  # not watching until it joins
    await tab.membership.leave(tell_the_run=False)


async def test_a_conversation_that_existed_already_is_announced_for_a_catch_up():
    # Another request created it in the meantime: a run may have published already.
    layer = LocalChannelLayer()
    tab = await waiting(layer)
    await groups.announce_creation(layer, SESSION_ID, 7, 42, created=False)
    assert not fanout.is_local("tab-1")
    assert groups.joined_from_start(await tab.next()) is False
    await tab.membership.leave(tell_the_run=False)


async def test_a_tab_leaving_before_it_joined_stops_watching():
    layer = LocalChannelLayer()
    tab = await waiting(layer)
    await groups.announce_creation(layer, SESSION_ID, 7, 42, created=True)
    assert fanout.is_local("tab-1")
    await tab.membership.leave(tell_the_run=False)  # before its inbox was read
    assert not fanout.is_local("tab-1")


async def test_only_the_owners_tabs_are_told():
    layer = LocalChannelLayer()
    alices = await waiting(layer, "alice-tab", owner_id=7)
    bobs = await waiting(layer, "bob-tab", owner_id=8)
    await groups.announce_creation(layer, SESSION_ID, 7, 42, created=True)
    assert (fanout.is_local("alice-tab"), fanout.is_local("bob-tab")) == (True, False)
    assert bobs.io.pending == 0
    for tab in (alices, bobs):
        await tab.membership.leave(tell_the_run=False)


@pytest.mark.django_db(transaction=True)
async def test_a_tab_whose_own_message_comes_next_waits_without_looking_again(make_user):
    """``look_again=False``: one hop less; a conversation created meanwhile is left to
    the tab's message (it opens it and announces it through the layer)."""
    alice = await sync_to_async(make_user)("alice")
    await sync_to_async(make_conversation)(SESSION_ID, [], owner=alice)
    layer = LocalChannelLayer()
    tab = Tab(layer, "tab-2")
    assert await tab.membership.wait_for_creation(SESSION_ID, alice.pk) is not None
    other = Tab(layer, "tab-3")
    found = await other.membership.wait_for_creation(SESSION_ID, alice.pk, look_again=False)
    assert found is None
    await groups.announce_creation(layer, SESSION_ID, alice.pk, 42, created=False)
    assert (await other.next())["conversation_pk"] == 42  # through the layer
    for waiting_tab in (tab, other):
        await waiting_tab.membership.leave(tell_the_run=False)
        waiting_tab.io.close()
