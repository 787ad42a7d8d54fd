"""The channel layer inside one process: groups, channels, queues that follow a reader
across group changes, and sends from another event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from django_agent_sessions.layers import local as local_layer
from django_agent_sessions.layers.local import LocalChannelLayer


async def test_group_send_reaches_members_only_and_discard_stops_it():
    layer = LocalChannelLayer()
    await layer.group_add("g", "a")
    await layer.group_add("g", "b")
    await layer.group_add("other", "c")
    await layer.group_send("g", {"type": "hello"})
    assert await layer.receive("a") == {"type": "hello"}
    assert await layer.receive("b") == {"type": "hello"}
    await layer.group_discard("g", "b")
    await layer.group_send("g", {"type": "again"})
    assert await layer.receive("a") == {"type": "again"}
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(layer.receive("c"), 0.05)


async def test_a_reader_keeps_its_queue_while_its_channel_changes_groups():
    """A stream waiting on a new id leaves the pending group for the conversation's."""
    layer = LocalChannelLayer()
    await layer.group_add("pending", "s")
    reader = asyncio.create_task(layer.receive("s"))
    await asyncio.sleep(0)
    await layer.group_discard("pending", "s")
    await layer.group_add("conversation", "s")
    await layer.group_send("conversation", {"type": "run"})
    assert await asyncio.wait_for(reader, 1) == {"type": "run"}


async def test_a_channel_nobody_reads_or_reaches_is_forgotten_and_sends_to_it_dropped():
    layer = LocalChannelLayer()
    await layer.group_add("g", "gone")
    await layer.send("gone", {"type": "kept until it leaves"})
    await layer.group_discard("g", "gone")
    await layer.send("gone", {"type": "dropped"})
    assert layer._mailboxes == {}
    assert layer._groups == {}


async def test_a_full_queue_drops_new_messages(monkeypatch):
    monkeypatch.setattr(local_layer, "CAPACITY", 2)
    layer = LocalChannelLayer()
    await layer.group_add("g", "slow")
    for n in range(3):
        await layer.send("slow", {"n": n})
    assert [await layer.receive("slow") for _ in range(2)] == [{"n": 0}, {"n": 1}]
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(layer.receive("slow"), 0.05)


async def test_a_send_from_another_event_loop_wakes_the_reader():
    layer = LocalChannelLayer()
    await layer.group_add("g", "reader")
    reader = asyncio.create_task(layer.receive("reader"))
    await asyncio.sleep(0)
    thread = threading.Thread(target=asyncio.run, args=(layer.send("reader", {"from": "t"}),))
    thread.start()
    assert await asyncio.wait_for(reader, 1) == {"from": "t"}
    thread.join()
