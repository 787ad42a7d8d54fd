"""What every streaming HTTP response of the app shares, whatever it writes: a queue of
chunks the response's generator writes, the tasks that fill it (following the
conversation, heartbeats), and a close that happens once, from any thread.

The packaged chat's stream (``sse.stream``) and each front-end protocol's response
(``protocols``) own one ``Body`` each; what differs between them is what they queue.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from django_agent_sessions.conf import app_settings
from django_agent_sessions.sse import framing
from django_agent_sessions.streaming import Follower

logger = logging.getLogger(__name__)

END = None  # queued when the response is over: its generator stops


class Body:
    """The chunks of one response and the tasks writing them (see the module). After
    ``SSE_HEARTBEAT_SECONDS`` with nothing else to write, a heartbeat: an SSE comment
    (proxies see traffic, every protocol's client skips it)."""

    def __init__(self) -> None:
        self.out: asyncio.Queue[str | None] = asyncio.Queue()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.tasks: list[asyncio.Task[None]] = []
        self.closed = False

    def start(self, following: Coroutine[Any, Any, None], *, heartbeats: bool = True) -> None:
        """Run ``following`` (and the heartbeats) on the running loop, the response's."""
        loop = self.loop = asyncio.get_running_loop()
        # In a context of its own: the following's database work shares asgiref's one
        # thread and connection (see ``sse.views.detached``).
        self.tasks.append(contextvars.Context().run(loop.create_task, following))
        if heartbeats:
            self.beat()

    def beat(self) -> None:
        assert self.loop is not None, "start() first"
        self.tasks.append(self.loop.create_task(self._heartbeats()))

    def put(self, chunk: str) -> None:
        self.out.put_nowait(chunk)

    def end(self) -> None:
        self.out.put_nowait(END)

    def close_soon(self, close: Callable[[], Awaitable[None]]) -> None:
        """Have ``close`` run on the response's loop: Django calls a body's ``close()``
        once the response is over, possibly from another thread."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(lambda: asyncio.ensure_future(close()))

    def closing(self) -> bool:
        """Stop the tasks; True the first time only (the caller closes the rest then)."""
        if self.closed:
            return False
        self.closed = True
        for task in self.tasks:
            task.cancel()
        return True

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(float(app_settings.SSE_HEARTBEAT_SECONDS))
            if self.out.empty():
                self.out.put_nowait(framing.HEARTBEAT)


async def leave(follower: Follower, *, tell_the_run: bool) -> None:
    """The follower leaves its groups; a failure is logged (the membership expires)."""
    try:
        await follower.close(tell_the_run=tell_the_run)
    except Exception:
        logger.warning("A closed stream could not leave its groups.", exc_info=True)
