"""A response's follower (``sse/following.py``): each response has a channel of its own,
named for its transport, and its inbox receives what the layer sends to that channel."""

from __future__ import annotations

from typing import Any

from channels.layers import InMemoryChannelLayer
from django.contrib.auth.models import AnonymousUser

from django_agent_sessions.sse.following import following
from django_agent_sessions.streaming import Visitor


async def _ignore(*_args: Any) -> None:
    return None


def _visitor(layer: InMemoryChannelLayer) -> Visitor:
    return Visitor(AnonymousUser(), "c-1", scope={}, channel_layer=layer, session_key="k")


async def test_each_response_follows_on_a_channel_of_its_own() -> None:
    visitor = _visitor(InMemoryChannelLayer())
    one = following(visitor, kind="ai_sdk", send=_ignore, restart=_ignore)
    two = following(visitor, kind="ai_sdk", send=_ignore, restart=_ignore)
    assert one.channel_name.startswith("agent_sessions.ai_sdk.")
    assert one.channel_name != two.channel_name
    assert one.follower.channel_name == one.channel_name


async def test_its_inbox_receives_what_the_layer_sends_to_its_channel() -> None:
    layer = InMemoryChannelLayer()
    own = following(_visitor(layer), kind="stream", send=_ignore, restart=_ignore)
    await layer.send(own.channel_name, {"type": "run.event", "seq": 1})
    assert own.io.layer_receive is not None
    assert await own.io.layer_receive() == {"type": "run.event", "seq": 1}
