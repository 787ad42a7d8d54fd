"""``layer``: a channel layer call is tried once more when it fails (a pooled connection
from before a Redis restart fails once), and ``publish`` sends a wire event to a group
as valid Unicode, on the real channel layer of the test run (Redis when configured)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from channels.layers import get_channel_layer

from django_agent_sessions.streaming.delivery import layer
from tests.task_workers import require_redis


def failing(times: int) -> tuple[Callable[..., Awaitable[str]], list[tuple[Any, ...]]]:
    """A call that raises ``ConnectionError`` its first ``times`` calls, and its calls."""
    calls: list[tuple[Any, ...]] = []

    async def call(*args: Any) -> str:
        calls.append(args)
        if len(calls) <= times:
            raise ConnectionError("Connection closed by server.")
        return f"answer {len(calls)}"

    return call, calls


async def test_a_call_that_works_is_made_once() -> None:
    call, calls = failing(0)
    assert await layer.retrying(call, "group", {"type": "x"}) == "answer 1"
    assert calls == [("group", {"type": "x"})]


async def test_a_call_that_fails_once_is_tried_again_with_the_same_arguments(
    caplog: pytest.LogCaptureFixture,
) -> None:
    call, calls = failing(1)
    assert await layer.retrying(call, "group", {"type": "x"}) == "answer 2"
    assert calls == [("group", {"type": "x"})] * 2
    assert "trying once more" in caplog.text


async def test_a_second_failure_reaches_the_caller() -> None:
    call, calls = failing(2)
    with pytest.raises(ConnectionError):
        await layer.retrying(call, "group")
    assert len(calls) == 2  # not more: a layer that stays down is the caller's to handle


async def test_publish_sends_an_agent_event_with_its_fields_to_every_member() -> None:
    channel_layer = get_channel_layer()
    group = f"test-layer-{uuid.uuid4().hex}"
    members = [f"test-layer.{uuid.uuid4().hex}" for _ in range(2)]
    for member in members:
        await channel_layer.group_add(group, member)
    # A lone surrogate cannot cross msgpack (Redis) or reach a browser as UTF-8.
    event = {"type": "text.delta", "run_id": "r", "seq": 3, "delta": "half \ud83d"}
    await layer.publish(channel_layer, group, event, origin="o-1", followed=True)
    for member in members:
        message = await asyncio.wait_for(channel_layer.receive(member), 5)
        assert message == {
            "type": "agent.event",
            "event": {"type": "text.delta", "run_id": "r", "seq": 3, "delta": "half \ufffd"},
            "origin": "o-1",
            "followed": True,
        }
        await channel_layer.group_discard(group, member)
    assert event["delta"] == "half \ud83d"  # the caller's event is left as it was


async def test_a_listeners_own_channel_is_named_here_on_a_layer_of_shared_keys() -> None:
    channel = await layer.own_channel(get_channel_layer(), "agent_sessions.run.")
    assert channel.startswith("agent_sessions.run.")
    assert "!" not in channel  # not one of the process's multiplexed new_channel() ones


@pytest.mark.redis
async def test_on_a_pub_sub_layer_it_is_subscribed_and_hears_another_process() -> None:
    """channels_redis's pub/sub layer refuses ``group_add`` for a channel it did not
    make; the channel ``own_channel`` gives joins a group, and hears what another
    process's layer (another instance) sends the group."""
    url = require_redis()
    from channels_redis.pubsub import RedisPubSubChannelLayer

    prefix = f"test-own-{uuid.uuid4().hex[:8]}"
    here, elsewhere = (RedisPubSubChannelLayer(hosts=[url], prefix=prefix) for _ in range(2))
    try:
        channel = await layer.own_channel(here, "agent_sessions.run.")
        assert channel.startswith(f"{prefix}agent_sessions.run.")
        with pytest.raises(RuntimeError):
            await here.group_add("control", "agent_sessions.run.named-here")
        await here.group_add("control", channel)
        # A cancelled receive would unsubscribe the channel: one receive, waited on.
        receiving = asyncio.ensure_future(here.receive(channel))
        for _attempt in range(10):  # until Redis has the subscription
            await elsewhere.group_send("control", {"type": "cancel"})
            done, _pending = await asyncio.wait({receiving}, timeout=0.5)
            if done:
                break
        assert receiving.result() == {"type": "cancel"}
    finally:
        await here.flush()
        await elsewhere.flush()
