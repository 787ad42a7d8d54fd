"""One queue of messages per socket: from the channel layer, and from this process's runs.

Channels dispatches a consumer's messages one at a time, from its websocket and from the
channel layer. Events that a run of the same process hands over directly (``fanout``)
must take the same path, so that a socket's relay state (catch-up buffer, ``Sequencer``)
is only ever changed by its own task, in arrival order. The consumer's channel-layer
receive is therefore an inbox: a task pumps the layer into it (receiving without
interruption, as Channels itself does; a cancelled channels_redis receive can lose a
message), and runs put their events into it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from django_agent_sessions.websocket import fanout

logger = logging.getLogger(__name__)

# Messages held for a socket whose task is busy; past it, text deltas are dropped (as the
# channel layer drops messages past its capacity; the completed item repairs the text).
INBOX_CAPACITY = 1000


class InboxMixin:
    """Mixed into the consumer before ``ClosingSafeMixin``, whose layer receive it pumps."""

    channel_name: str
    _inbox: asyncio.Queue[Any] | None = None
    _pump: asyncio.Task[None] | None = None
    _loop: asyncio.AbstractEventLoop | None = None  # the consumer's, once it receives

    if TYPE_CHECKING:  # provided by ClosingSafeMixin: the layer's receive, made robust

        async def _receive_from_layer(self) -> Any: ...

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)  # type: ignore[misc]
        finally:
            self.stop_watching()
            if self._pump is not None:
                self._pump.cancel()

    @property
    def channel_receive(self) -> Any:
        return self._next_message

    @channel_receive.setter
    def channel_receive(self, receive: Any) -> None:
        self._layer_receive = receive

    def watch(self, conversation_pk: int) -> None:
        """Receive the events of this process's runs of the conversation in the inbox."""
        fanout.watch(conversation_pk, self.channel_name, self.deliver_local)

    def stop_watching(self) -> None:
        if getattr(self, "channel_name", None):
            fanout.unwatch(self.channel_name)

    def deliver_local(self, message: dict[str, Any]) -> None:
        inbox = self._open_inbox()
        loop = self._loop
        if loop is not None and _running_loop() is not loop:
            # A run on another thread's event loop (code under async_to_sync): an
            # asyncio queue may only be woken from its own loop.
            loop.call_soon_threadsafe(self._put, inbox, message)
            return
        self._put(inbox, message)

    async def _next_message(self) -> Any:
        inbox = self._open_inbox()
        self._loop = asyncio.get_running_loop()
        if self._pump is None:
            self._pump = asyncio.create_task(self._pump_layer(inbox))
        message = await inbox.get()
        if isinstance(message, BaseException):
            raise message
        return message

    def _open_inbox(self) -> asyncio.Queue[Any]:
        if self._inbox is None:
            self._inbox = asyncio.Queue()
        return self._inbox

    async def _pump_layer(self, inbox: asyncio.Queue[Any]) -> None:
        while True:
            try:
                message = await self._receive_from_layer()
            except Exception as error:
                inbox.put_nowait(error)  # the consumer fails on it, as it would have
                return
            self._put(inbox, message)

    def _put(self, inbox: asyncio.Queue[Any], message: dict[str, Any]) -> None:
        if inbox.qsize() >= INBOX_CAPACITY and _is_text_delta(message):
            # Only text is dropped: the completed item repairs it. Ends, items, control
            # messages (a snapshot, a timeout) are kept, or the socket could stall.
            logger.warning("A socket's inbox is full; a text delta was dropped.")
            return
        inbox.put_nowait(message)


def _is_text_delta(message: dict[str, Any]) -> bool:
    event = message.get("event")
    return isinstance(event, dict) and event.get("type") == "text.delta"


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
