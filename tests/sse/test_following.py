"""A response's follower (``sse/following.py``): each response has a channel of its own,
named for its transport, and its inbox receives what the layer sends to that channel."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from channels.layers import InMemoryChannelLayer
from django.contrib.auth.models import AnonymousUser

from django_agent_sessions.sse.following import following, response_channel
from django_agent_sessions.streaming import Visitor
from tests.task_workers import require_redis


async def _ignore(*_args: Any) -> None:
    return None


def _visitor(layer: InMemoryChannelLayer) -> Visitor:
    return Visitor(AnonymousUser(), "c-1", scope={}, channel_layer=layer, session_key="k")


async def test_each_response_follows_on_a_channel_of_its_own() -> None:
    visitor = _visitor(InMemoryChannelLayer())
    one = await response_channel(visitor, "ai_sdk")
    two = await response_channel(visitor, "ai_sdk")
    assert one.startswith("agent_sessions.ai_sdk.")
    assert one != two
    own = following(visitor, channel_name=one, send=_ignore, restart=_ignore)
    assert own.follower.channel_name == own.channel_name == one


async def test_its_inbox_receives_what_the_layer_sends_to_its_channel() -> None:
    layer = InMemoryChannelLayer()
    visitor = _visitor(layer)
    channel_name = await response_channel(visitor, "stream")
    own = following(visitor, channel_name=channel_name, send=_ignore, restart=_ignore)
    await layer.send(own.channel_name, {"type": "run.event", "seq": 1})
    assert own.io.layer_receive is not None
    assert await own.io.layer_receive() == {"type": "run.event", "seq": 1}


async def test_a_response_closed_before_it_read_leaves_no_subscription() -> None:
    """On channels_redis's pub/sub layer a response's channel is a subscription, which
    only a cancelled receive ends: its follower receives from the start, so that the
    response's close ends it even when the response never read (refused, or gone)."""
    url = require_redis()
    from channels_redis.pubsub import RedisPubSubChannelLayer
    from redis.asyncio import Redis

    layer = RedisPubSubChannelLayer(hosts=[url], prefix=f"test-sub-{uuid.uuid4().hex[:8]}")
    visitor = _visitor(layer)  # type: ignore[arg-type]
    client = Redis.from_url(url)

    async def subscribers(channel: str) -> int:
        return int(dict(await client.pubsub_numsub(channel))[channel.encode()])

    try:
        channel = await response_channel(visitor, "ai_sdk")
        assert await subscribers(channel) == 1
        own = following(visitor, channel_name=channel, send=_ignore, restart=_ignore)
        await own.follower.close(tell_the_run=False)
        for _check in range(500):  # until the cancelled receive has unsubscribed
            if await subscribers(channel) == 0:
                break
            await asyncio.sleep(0.01)
        assert await subscribers(channel) == 0
    finally:
        await layer.flush()
        await client.aclose()
