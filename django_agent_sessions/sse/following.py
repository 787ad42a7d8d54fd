"""What one HTTP response needs to follow a conversation: its own channel, its inbox and
its ``streaming.Follower``.

The packaged chat's stream (``sse.stream``) and each front-end protocol's response
(``protocols``) follow the same way; only what they write differs.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from django_agent_sessions.streaming import Follower, SocketIO, Visitor


@dataclass(frozen=True)
class Following:
    """A response's channel name, inbox and follower."""

    channel_name: str
    io: SocketIO
    follower: Follower


def following(
    visitor: Visitor,
    *,
    kind: str,
    send: Callable[[Any], Awaitable[None]],
    restart: Callable[[], Awaitable[None]],
) -> Following:
    """A follower of ``visitor``'s conversation for one response (``kind`` names the
    transport in the channel's name), sending its frames to ``send`` and calling
    ``restart`` when this worker stops."""
    # A channel of its own, as a run's control channel (see ``ActiveRun.join``):
    # channels_redis multiplexes new_channel() channels over one receive, which a
    # closing response's cancelled receive can make lose another response's message.
    channel_name = f"agent_sessions.{kind}.{uuid.uuid4().hex}"
    io = SocketIO()
    io.layer_receive = functools.partial(visitor.channel_layer.receive, channel_name)
    follower = Follower(visitor, channel_name=channel_name, io=io, send=send, restart=restart)
    return Following(channel_name, io, follower)
