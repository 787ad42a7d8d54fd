"""A socket's two directions, made robust: sends that survive the socket closing, and one
inbox for everything the consumer receives besides its websocket.

**Sends.** daphne raises ``autobahn.exception.Disconnected`` on a send once the browser's
close handshake has begun, before the consumer reads ``websocket.disconnect`` (measured
on the example project: 4 tabs of 8 closed right after ``run.started`` left their run
going). Uncaught, it would end the consumer before ``disconnect()`` (no group left, the
run going on for nobody). Such a send is dropped instead, and so is every later one;
so is every send after the consumer's own ``websocket.close``.

**The inbox.** Channels dispatches a consumer's messages one at a time, from its
websocket and from the channel layer. Events that a run of the same process hands over
directly (``fanout``) must take the same path, so that a socket's relay state (catch-up
buffer, ``Sequencer``) is only ever changed by its own task, in arrival order. So the
consumer's channel-layer receive is an inbox: a task pumps the layer into it (receiving
without interruption, as Channels itself does; a cancelled channels_redis receive can
lose a message), and runs put their events into it. A Redis restart breaks the pooled
connection the pump waits on: it rejoins the socket's groups and waits again; a layer
that stays down closes the socket, and the page reconnects.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from django_agent_sessions.streaming.delivery import fanout

logger = logging.getLogger(__name__)

# A receive is tried this often: each pooled connection from before a Redis restart
# fails once. Past that the socket closes (1011) and the page reconnects and resumes.
_RECEIVE_ATTEMPTS = 3

# Messages held for a socket whose task is busy; past it, text deltas are dropped (as the
# channel layer drops messages past its capacity; the completed item repairs the text).
INBOX_CAPACITY = 1000


class SocketIO:
    """The guarded send and the inbox of one consumer."""

    def __init__(self) -> None:
        # Joins the socket's groups again after the layer lost them (set by its groups).
        self.rejoin_groups: Callable[[], Awaitable[None]] | None = None
        self.gone = False  # the socket is closing: sends are dropped from now on
        self.layer_receive: Callable[[], Awaitable[Any]] | None = None  # set by Channels
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._pump_cancelled = False
        self._loop: asyncio.AbstractEventLoop | None = None  # the consumer's, once it reads
        self._watching = ""

    def guarded(self, send: Callable[[Any], Awaitable[None]]) -> Callable[[Any], Awaitable[None]]:
        """The server's send, made safe for a socket that is closing."""

        async def guarded(message: dict[str, Any]) -> None:
            if self.gone and message.get("type") in ("websocket.send", "websocket.close"):
                return
            try:
                await send(message)
            except Exception as error:
                if not _is_disconnected(error):
                    raise
                self.gone = True
                logger.debug("Dropped a frame for a closing socket.")
            if message.get("type") == "websocket.close":
                # ASGI allows nothing after it: uvicorn raises on a send (a drain's 4012,
                # then an event of a run the relay still had), daphne drops it.
                self.gone = True

        return guarded

    def watch(self, conversation_pk: int, channel_name: str) -> None:
        """Receive the events of this process's runs of the conversation in the inbox."""
        self._watching = channel_name
        fanout.watch(conversation_pk, channel_name, self.deliver_local)

    def close(self) -> None:
        if self._watching:
            fanout.unwatch(self._watching)
        # Once: a pub/sub layer's receive unsubscribes when it is cancelled, and a second
        # cancel interrupts that (channels_redis logs it with a traceback).
        if self._pump is not None and not self._pump_cancelled:
            self._pump_cancelled = True
            self._cancel_pump(self._pump)

    def _cancel_pump(self, pump: asyncio.Task[None]) -> None:
        # On the pump's loop, from any thread (Django closes a response in a thread), and
        # after the pump's first step: cancelled before it began its receive, it would
        # leave a pub/sub layer's channel subscribed.
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(pump.cancel)
        else:
            pump.cancel()

    def deliver_local(self, message: dict[str, Any]) -> None:
        loop = self._loop
        if loop is not None and _running_loop() is not loop:
            # A run on another thread's event loop (code under async_to_sync): an
            # asyncio queue may only be woken from its own loop.
            loop.call_soon_threadsafe(self._put, message)
            return
        self._put(message)

    def receive_now(self) -> None:
        """Start receiving from the layer now, not at the first read: a pub/sub layer's
        channel stays subscribed until a receive of it is cancelled, which ``close()``
        then does even for a response closed before it ever read."""
        self._loop = asyncio.get_running_loop()
        if self._pump is None:
            self._pump = asyncio.create_task(self._pump_layer())

    async def next_message(self) -> Any:
        """The consumer's channel-layer receive: the next message of the inbox."""
        self.receive_now()
        message = await self._inbox.get()
        if isinstance(message, BaseException):
            raise message
        return message

    @property
    def pending(self) -> int:
        return self._inbox.qsize()

    async def _pump_layer(self) -> None:
        while True:
            try:
                message = await self._receive_from_layer()
            except Exception as error:
                self._inbox.put_nowait(error)  # the consumer fails on it, as it would have
                return
            self._put(message)

    async def _receive_from_layer(self) -> Any:
        # The restarted Redis has forgotten the socket's groups: rejoin them, then wait
        # again on a new connection, instead of leaving a socket that would be deaf.
        assert self.layer_receive is not None
        for attempt in range(_RECEIVE_ATTEMPTS):
            try:
                return await self.layer_receive()
            except Exception:
                if attempt == _RECEIVE_ATTEMPTS - 1:
                    raise
                logger.warning("The channel layer failed; rejoining and waiting again.")
                await asyncio.sleep(0.1 * (attempt + 1))
                if self.rejoin_groups is not None:
                    await self.rejoin_groups()
        raise AssertionError("unreachable")

    def _put(self, message: dict[str, Any]) -> None:
        if self._inbox.qsize() >= INBOX_CAPACITY and _is_text_delta(message):
            # Only text is dropped: the completed item repairs it. Ends, items, control
            # messages (a snapshot, a timeout) are kept, or the socket could stall.
            logger.warning("A socket's inbox is full; a text delta was dropped.")
            return
        self._inbox.put_nowait(message)


def _is_text_delta(message: dict[str, Any]) -> bool:
    event = message.get("event")
    return isinstance(event, dict) and event.get("type") == "text.delta"


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _is_disconnected(error: BaseException) -> bool:
    """Whether ``error`` is the server refusing a send on a socket that is closing."""
    try:
        from autobahn.exception import Disconnected
    except ImportError:  # another ASGI server than daphne
        return False
    return isinstance(error, Disconnected)
