"""One browser's stream of a conversation: its ``history`` frame, then its live events.

An ``EventStream`` is to an HTTP response what the consumer is to a socket, with the
wing's own parts: ``Groups`` (the conversation's groups), ``SocketIO`` (one inbox for
the channel layer's messages and this process's runs') and ``Relay`` (history, catch-up,
ordered events). A task follows the conversation and queues frames; the response's
generator writes them, a heartbeat when there is nothing to write, and ends the stream
after ``SSE_STREAM_SECONDS`` (the browser reconnects at once and gets a fresh
``history``), so that no response lives forever across deploys.

Closing a stream cancels nothing: a run belongs to its conversation, and the browser
reconnects. The stream leaves its groups without asking the run who still watches.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.sse import framing
from django_agent_sessions.sse.visitor import HttpVisitor
from django_agent_sessions.websocket import groups, history, layer, lost
from django_agent_sessions.websocket.groups import Groups
from django_agent_sessions.websocket.relay import Relay
from django_agent_sessions.websocket.socket_io import SocketIO

logger = logging.getLogger(__name__)

_END = None  # queued when the following task is over: the stream ends


class EventStream:
    """The frames of one conversation for one browser (see the module).

    The response's body: an async iterable with a ``close()`` that Django calls when the
    response is over, whatever ended it (a generator's own ``finally`` would wait for
    the garbage collector when the client leaves while a write is in flight).
    """

    def __init__(self, visitor: HttpVisitor) -> None:
        self.visitor = visitor
        self.channel_layer = visitor.channel_layer
        self.channel_name = ""
        self.conversation_pk = visitor.conversation_pk
        self.io = SocketIO()
        self.membership = Groups(self, self.io)
        self.relay = Relay(self)
        self._out: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closing: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def user(self) -> Any:
        return self.visitor.user

    async def send_json(self, content: Any) -> None:
        self._out.put_nowait(framing.event_text(content))

    def __aiter__(self) -> AsyncIterator[str]:
        return self._chunks()

    def close(self) -> None:
        """End the stream: leave its groups, stop its tasks. Django calls it once the
        response is over, possibly from another thread."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._close_soon)

    def _close_soon(self) -> None:
        if self._closing is None and not self._closed:
            self._closing = asyncio.ensure_future(self._close())

    async def _chunks(self) -> AsyncIterator[str]:
        loop = self._loop = asyncio.get_running_loop()
        # A channel of its own, as a run's control channel (see ``runs.ActiveRun.join``):
        # channels_redis multiplexes new_channel() channels over one receive, which a
        # closing stream's cancelled receive can make lose another stream's message.
        self.channel_name = f"agent_sessions.stream.{uuid.uuid4().hex}"
        self.io.layer_receive = functools.partial(self.channel_layer.receive, self.channel_name)
        lost.sweeper.acquire(self.channel_layer)
        # Following does the stream's database work: in a context of its own, so that it
        # shares asgiref's one thread and connection (see ``views.detached``).
        follower = contextvars.Context().run(loop.create_task, self._follow())
        self._tasks = [follower, loop.create_task(self._heartbeats())]
        ends = loop.call_later(float(app_settings.SSE_STREAM_SECONDS), self._out.put_nowait, _END)
        try:
            yield framing.opening()
            while (written := self._written(await self._out.get())) is not None:
                yield written
        finally:
            ends.cancel()
            await self._close()

    def _written(self, chunk: str | None) -> str | None:
        """``chunk`` and everything queued after it, as one write; None at the end."""
        written = ""
        while chunk is not _END:
            written += chunk
            if self._out.empty():
                return written
            chunk = self._out.get_nowait()
        if written:  # the end after more frames: they go first, the end next time
            self._out.put_nowait(_END)
            return written
        return None

    async def _heartbeats(self) -> None:
        heartbeat = float(app_settings.SSE_HEARTBEAT_SECONDS)
        while True:
            await asyncio.sleep(heartbeat)
            if self._out.empty():
                self._out.put_nowait(framing.HEARTBEAT)

    async def _follow(self) -> None:
        try:
            conversation_pk = self.conversation_pk
            if conversation_pk is None:
                conversation_pk = await self.membership.wait_for_creation(
                    self.visitor.session_id, self.visitor.owner_id
                )
            if conversation_pk is None:
                await history.send_empty_frame(self.send_json)
            else:
                await self._join(conversation_pk)
                await self.relay.send_history()
            while True:
                await self._handle(await self.io.next_message())
        except asyncio.CancelledError:
            raise
        except SessionOwnershipError:
            pass  # someone else's since the stream opened: it ends, its reconnect is refused
        except Exception:
            logger.exception("A conversation's stream failed; it ends (the browser reconnects).")
        self._out.put_nowait(_END)

    async def _join(self, conversation_pk: int) -> None:
        self.conversation_pk = conversation_pk
        await self.membership.join(conversation_pk)

    async def _handle(self, message: dict[str, Any]) -> None:
        """A channel-layer message (or this process's run's), as the consumer's handlers."""
        kind = message.get("type")
        if kind == "agent.event":
            await self.relay.on_event(message)
        elif kind == "agent.snapshot":
            await self.relay.on_snapshot(message["snapshot"])
        elif kind == "agent.catchup_timeout":
            await self.relay.on_catchup_timeout()
        elif kind == "agent.expire":
            await self.relay.on_expire()
        elif kind == "agent.presence":
            here = {"type": "agent.here"}
            await layer.retrying(self.channel_layer.send, message["reply_to"], here)
        elif kind == "agent.resync" and self.conversation_pk is not None:
            await self.relay.send_history()  # the layer lost messages (layers.postgres)
        elif kind == "agent.created" and self.conversation_pk is None:
            await self._on_created(message)

    async def _on_created(self, message: dict[str, Any]) -> None:
        """As the consumer's ``agent_created``."""
        await self._join(int(message["conversation_pk"]))
        if not groups.joined_from_start(message):
            await self.relay.send_history(unless_empty=True)

    async def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in self._tasks:
            task.cancel()
        self.relay.stop()
        self.io.gone = True
        if self._tasks:  # it acquired the sweeper
            lost.sweeper.release()
        try:
            await self.membership.leave(tell_the_run=False)
        except Exception:
            logger.warning("A closed stream could not leave its groups.", exc_info=True)
        finally:
            self.io.close()
