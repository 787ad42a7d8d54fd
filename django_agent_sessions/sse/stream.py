"""One browser's stream of a conversation: its ``history`` frame, then its live events.

An ``EventStream`` is to an HTTP response what the consumer is to a socket: a
``streaming.Follower`` follows the conversation, fed by a ``SocketIO`` (one inbox for
the channel layer's messages and this process's runs'). A task follows the conversation
and queues frames; the response's
generator writes them, a heartbeat when there is nothing to write, and ends the stream
after ``SSE_STREAM_SECONDS`` (the browser reconnects at once and gets a fresh
``history``), so that no response lives forever across deploys.

Closing a stream cancels nothing: a run belongs to its conversation, and the browser
reconnects. The stream leaves its groups without asking the run who still watches.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.sse import framing
from django_agent_sessions.sse.body import END, Body, leave
from django_agent_sessions.sse.following import following
from django_agent_sessions.streaming import Visitor

logger = logging.getLogger(__name__)


class EventStream:
    """The frames of one conversation for one browser (see the module).

    The response's body: an async iterable with a ``close()`` that Django calls when the
    response is over, whatever ended it (a generator's own ``finally`` would wait for
    the garbage collector when the client leaves while a write is in flight).
    """

    def __init__(
        self, visitor: Visitor, channel_name: str, resume: tuple[str, int] | None = None
    ) -> None:
        self.visitor = visitor
        self.resume = resume  # where the browser's Last-Event-ID says it was
        self.channel_layer = visitor.channel_layer
        own = following(
            visitor, channel_name=channel_name, send=self.send_json, restart=self._restart
        )
        self.channel_name, self.io, self.follower = own.channel_name, own.io, own.follower
        self._body = Body()
        self._out = self._body.out

    async def send_json(self, content: Any) -> None:
        self._out.put_nowait(framing.event_text(content))

    async def _restart(self) -> None:
        """This worker stops (``streaming.drain``): the stream ends and the browser
        reconnects soon, to another worker."""
        self._out.put_nowait(framing.restart())
        self._body.end()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._chunks()

    def close(self) -> None:
        """End the stream: leave its groups, stop its tasks. Django calls it once the
        response is over, possibly from another thread."""
        self._body.close_soon(self._close)

    async def _chunks(self) -> AsyncIterator[str]:
        self._body.start(self._follow())
        assert self._body.loop is not None
        ends = self._body.loop.call_later(float(app_settings.SSE_STREAM_SECONDS), self._body.end)
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
        while chunk is not END:
            written += chunk
            if self._out.empty():
                return written
            chunk = self._out.get_nowait()
        if written:  # the end after more frames: they go first, the end next time
            self._body.end()
            return written
        return None

    async def _follow(self) -> None:
        try:
            await self.follower.open(resume=self.resume)
            while True:
                await self.follower.handle(await self.io.next_message())
        except asyncio.CancelledError:
            raise
        except SessionOwnershipError:
            pass  # someone else's since the stream opened: it ends, its reconnect is refused
        except Exception:
            logger.exception("A conversation's stream failed; it ends (the browser reconnects).")
        self._body.end()

    async def _close(self) -> None:
        if self._body.closing():
            await leave(self.follower, tell_the_run=False)
