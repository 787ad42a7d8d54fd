"""Calls to the channel layer that survive a Redis restart.

After a Redis restart, channels_redis's pooled connections from before it fail on their
next use, once each (measured: every socket's receive, and the first ``group_send`` of
each worker, raised ``ConnectionError: Connection closed by server``). Each call here is
tried a second time, on a new connection, before its caller gives up.
"""

from __future__ import annotations

import logging
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
