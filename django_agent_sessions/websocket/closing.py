"""A consumer that survives its socket closing mid-send and Redis restarting under it.

Two failures used to end a consumer without ``disconnect()`` (so without leaving its
group or telling the run it left, and the run went on for nobody):

- daphne raises ``autobahn.exception.Disconnected`` on a send once the browser's close
  handshake has begun, before the consumer reads ``websocket.disconnect`` (measured on
  the example project: 4 tabs of 8 closed right after ``run.started`` left their run
  going). Such a send is dropped, and so is every later one.
- channels_redis's receive fails once on a pooled connection broken by a Redis restart;
  it is tried once more (``layer.retrying``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

logger = logging.getLogger(__name__)
# A receive is tried this often: each pooled connection from before a Redis restart
# fails once.
_RECEIVE_ATTEMPTS = 3


class ClosingSafeMixin:
    """Mixed into the consumer before ``AsyncJsonWebsocketConsumer``."""

    # Set once the socket is closing: sends are dropped from then on (see _guarded).
    _gone = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await super().__call__(scope, receive, self._guarded(send))  # type: ignore[misc]

    def _guarded(self, send: Any) -> Any:
        """The server's send, made safe for a socket that is closing.

        daphne raises ``autobahn.exception.Disconnected`` on a send once the browser's
        close handshake has begun, before the consumer reads ``websocket.disconnect``.
        Uncaught, it would end the consumer and ``disconnect()`` would never run (the
        run would go on for nobody). Such a send is dropped instead, and so is every
        later one; the disconnect is handled as usual when it is read.
        """

        async def guarded(message: dict[str, Any]) -> None:
            if self._gone and message.get("type") in ("websocket.send", "websocket.close"):
                return
            try:
                await send(message)
            except Exception as error:
                if not _is_disconnected(error):
                    raise
                self._gone = True
                logger.debug("Dropped a frame for a closing socket.")

        return guarded

    _layer_receive: Any  # the channel layer's receive, set by InboxMixin

    async def _receive_from_layer(self) -> Any:
        # A Redis restart breaks the pooled connections this waits on, and the restarted
        # Redis has forgotten the socket's groups: rejoin them, then wait again on a new
        # connection, instead of closing a socket that would otherwise be deaf.
        for attempt in range(_RECEIVE_ATTEMPTS):
            try:
                return await self._layer_receive()
            except Exception:
                if attempt == _RECEIVE_ATTEMPTS - 1:
                    raise
                logger.warning("The channel layer failed; rejoining and waiting again.")
                await asyncio.sleep(0.1 * (attempt + 1))
                await self.rejoin_groups()
        raise AssertionError("unreachable")

    async def rejoin_groups(self) -> None:
        """Join the socket's channel-layer groups again (after the layer lost them)."""


def _is_disconnected(error: BaseException) -> bool:
    """Whether ``error`` is the server refusing a send on a socket that is closing."""
    try:
        from autobahn.exception import Disconnected
    except ImportError:  # another ASGI server than daphne
        return False
    return isinstance(error, Disconnected)
