"""Calls to the channel layer that survive a Redis restart, and the channel a listener of
this process receives on.

After a Redis restart, channels_redis's pooled connections from before it fail on their
next use, once each (measured: every socket's receive, and the first ``group_send`` of
each worker, raised ``ConnectionError: Connection closed by server``). Each call here is
tried a second time, on a new connection, before its caller gives up.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from django_agent_sessions.streaming.wire.text import valid_unicode

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


async def retrying(call: Callable[..., Awaitable[_T]], *args: Any) -> _T:
    """``call(*args)``, tried a second time if the first attempt raises.

    After a Redis restart, channels_redis's pooled connections from before it fail on
    their next use, once each; the second attempt gets a new connection.
    """
    try:
        return await call(*args)
    except Exception:
        logger.warning("A channel layer call failed; trying once more.", exc_info=True)
        return await call(*args)


async def publish(layer: Any, group: str, event: dict[str, Any], **fields: Any) -> None:
    """Send a wire event to every socket of a group (valid Unicode: msgpack needs it).

    ``fields`` go into the layer message beside the event (``fanout.layer_fields``).
    """
    message = {"type": "agent.event", "event": valid_unicode(event), **fields}
    await retrying(layer.group_send, group, message)


async def own_channel(channel_layer: Any, prefix: str) -> str:
    """A channel that one listener of this process (a run's control) receives on.

    channels_redis's core layer multiplexes a process's ``new_channel()`` channels over
    one blocking receive, and cancelling a receive there (as a run's listener is, when
    the run ends) can drop a message meant for a socket of the same process: a channel
    of our own naming has a receive of its own. A pub/sub layer delivers only to the
    channels this process subscribed to, which ``new_channel()`` does, and refuses
    ``group_add`` for any other; each of its channels has a queue of its own."""
    if _publishes_and_subscribes(channel_layer):
        return str(await channel_layer.new_channel(prefix))
    return f"{prefix}{uuid.uuid4().hex}"


def _publishes_and_subscribes(channel_layer: Any) -> bool:
    """Whether the layer is channels_redis's ``RedisPubSubChannelLayer`` (or a subclass)."""
    return any(
        kind.__module__ == "channels_redis.pubsub" and kind.__name__ == "RedisPubSubChannelLayer"
        for kind in type(channel_layer).__mro__
    )
