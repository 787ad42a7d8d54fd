"""``Draining``: the ASGI application wrapper that lets a deploy drain (``streaming``'s
``running.drain``), public as ``django_agent_sessions.Draining``.

Wrap the project's application in its ``asgi.py``::

    from django_agent_sessions import Draining

    application = Draining(ProtocolTypeRouter({...}))   # websockets: daphne or uvicorn
    application = Draining(get_asgi_application())      # the SSE chat: uvicorn, ...

On SIGTERM the worker drains: it starts no new run, sends its tabs to another worker and
lets its runs finish for up to ``DRAIN_SECONDS`` (docs/integration.md, "Deploys").

- **uvicorn** (and servers that speak the ASGI lifespan protocol): the wrapper answers
  the lifespan messages (Django's handler refuses them), starts draining as soon as
  SIGTERM arrives, and lets uvicorn's own handler run at once: uvicorn stops accepting
  connections and closes its websockets (1012) while the runs go on. Its lifespan
  shutdown waits for the drain, so the process exits once every run has ended.
- **daphne** has no lifespan and stops everything at once on SIGTERM: the wrapper takes
  SIGTERM from its first connection on, drains, and only then hands the signal to
  daphne's own handler.

The signal is taken only in the main thread with a running event loop (a server's),
never at import or in ``ready()``; importing this module needs no settings.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any

logger = logging.getLogger(__name__)

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class Draining:
    """An ASGI application that drains on SIGTERM (see the module)."""

    def __init__(self, application: Any) -> None:
        self.application = application
        self._hooked = False
        self._lifespan = False  # the server speaks lifespan: it waits for the shutdown

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            self._lifespan = True
            self._hook_sigterm()
            return await _lifespan(receive, send)
        self._hook_sigterm()
        await self.application(scope, receive, send)

    def _hook_sigterm(self) -> None:
        if self._hooked or threading.current_thread() is not threading.main_thread():
            return
        self._hooked = True
        loop = asyncio.get_running_loop()
        previous = signal.getsignal(signal.SIGTERM)

        def on_sigterm(signum: int, frame: FrameType | None) -> None:
            loop.call_soon_threadsafe(self._sigterm, previous, signum, frame)

        signal.signal(signal.SIGTERM, on_sigterm)

    def _sigterm(self, previous: Any, signum: int, frame: FrameType | None) -> None:
        draining = asyncio.ensure_future(_drain())
        if self._lifespan and callable(previous):
            previous(signum, frame)  # uvicorn shuts down; its lifespan waits for the drain
        else:
            draining.add_done_callback(lambda _done: _hand_over(previous, signum, frame))


def _hand_over(previous: Any, signum: int, frame: FrameType | None) -> None:
    """The signal, drained, to whoever had it before (daphne stops; by default the
    process ends as SIGTERM would have ended it)."""
    if callable(previous):
        previous(signum, frame)
        return
    signal.signal(signal.SIGTERM, previous)
    signal.raise_signal(signal.SIGTERM)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            try:
                await _drain()
            except Exception:
                logger.exception("The drain failed.")
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _drain() -> None:
    # Imported when needed: a project's asgi.py imports this module before Django is set
    # up (``get_asgi_application()``), and the drain needs the models.
    from django_agent_sessions.streaming import drain

    await drain.drain()
