"""What one HTTP response needs to follow a conversation: its own channel, its inbox and
its ``streaming.Follower``.

The packaged chat's stream (``sse.stream``) and each front-end protocol's response
(``protocols``) follow the same way; only what they write differs.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from django_agent_sessions.streaming import Follower, SocketIO, Visitor, own_channel


@dataclass(frozen=True)
class Following:
    """A response's channel name, inbox and follower."""

    channel_name: str
    io: SocketIO
    follower: Follower


async def response_channel(visitor: Visitor, kind: str) -> str:
    """A channel of one response's own, named for its transport (``kind``), as a run's
    control channel is (``streaming.own_channel``): channels_redis's core layer
    multiplexes new_channel() channels over one receive, which a closing response's
    cancelled receive can make lose another response's message; its pub/sub layer
    delivers only to the channels new_channel() subscribed to."""
    return await own_channel(visitor.channel_layer, f"agent_sessions.{kind}.")


def following(
    visitor: Visitor,
    *,
    channel_name: str,
    send: Callable[[Any], Awaitable[None]],
    restart: Callable[[], Awaitable[None]],
) -> Following:
    """A follower of ``visitor``'s conversation for one response, on its channel
    (``response_channel``), sending its frames to ``send`` and calling ``restart`` when
    this worker stops."""
    io = SocketIO()
    io.layer_receive = functools.partial(visitor.channel_layer.receive, channel_name)
    # From now on: the response's close then ends the receive (and with it a pub/sub
    # layer's subscription), even if the response ends before it ever reads.
    io.receive_now()
    follower = Follower(visitor, channel_name=channel_name, io=io, send=send, restart=restart)
    return Following(channel_name, io, follower)
