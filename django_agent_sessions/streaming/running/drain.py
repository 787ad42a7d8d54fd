"""Deploys drain: a worker told to stop finishes what it can and hands its tabs over.

``drain()`` (on SIGTERM, through ``django_agent_sessions.Draining``):

1. the worker starts no new run and resumes no paused one: a message or a decision sent
   to it is refused with ``unavailable`` and ``retry_after`` (sent again, it reaches
   another worker), and a tab that opens on it is sent on at once;
2. every tab it serves is told to go elsewhere: a socket closes with 1012 (Service
   Restart: the page reconnects at once), an HTTP stream ends (the browser reconnects).
   On another worker the tab catches up on the run, which goes on here and publishes
   through the channel layer. Leaving so tells the run nothing: it is not alone;
3. its runs go on for up to ``DRAIN_SECONDS``; a run still going then is stopped and
   ends ``interrupted`` through ``lifecycle.end()``: its history valid, every tab told.

A run waiting for decisions has no task here: it waits in the database for any worker.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from django_agent_sessions.conf import app_settings
from django_agent_sessions.streaming.running import active_runs

logger = logging.getLogger(__name__)

Restart = Callable[[], Awaitable[None]]

# This process's tabs, each with how to send it elsewhere.
_tabs: dict[object, Restart] = {}
_drain: asyncio.Task[None] | None = None


def draining() -> bool:
    """Whether this worker is stopping: it starts no run and sends tabs elsewhere."""
    return _drain is not None


def serving(tab: object, restart: Restart) -> None:
    """``tab`` is served here: ``restart()`` sends it to another worker."""
    _tabs[tab] = restart


def gone(tab: object) -> None:
    _tabs.pop(tab, None)


async def drain() -> None:
    """Stop serving (see the module); returns once every run of this process ended."""
    global _drain
    if _drain is None:
        _drain = asyncio.ensure_future(_drained())
    await asyncio.shield(_drain)


async def _drained() -> None:
    seconds = float(app_settings.DRAIN_SECONDS)
    logger.warning(
        "Draining: %d tab(s) sent elsewhere, %d run(s) get up to %s s to finish.",
        len(_tabs),
        len(active_runs.local_runs()),
        seconds,
    )
    for tab, restart in list(_tabs.items()):
        try:
            await restart()
        except Exception:
            logger.warning("Could not send a tab elsewhere.", exc_info=True)
        gone(tab)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (going := _running()) and (left := deadline - loop.time()) > 0:
        await asyncio.wait(going, timeout=left)
    for active in active_runs.local_runs():
        logger.warning("Run %s is still going at the end of the drain: interrupted.", active.run_id)
        active.interrupt()
    if going := _running():
        await asyncio.wait(going, timeout=float(app_settings.SETTLE_SECONDS))
    logger.warning("Drained.")


def _running() -> set[asyncio.Task[None]]:
    return {
        active.task
        for active in active_runs.local_runs()
        if active.task is not None and not active.task.done()
    }
