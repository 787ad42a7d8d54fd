"""The sweep: runs whose worker died, and approvals nobody decided in time, end visibly.

A worker renews its run's lease every ``RUN_LEASE_SECONDS / 3``. A worker killed mid-run
(SIGKILL, OOM, a lost machine) renews nothing and says nothing; the sweep notices its
lease expiring and ends the run as failed (``worker_lost``). A run waiting for approvals
past ``APPROVAL_TIMEOUT`` is ended as cancelled, its calls rejected. Both go through
``lifecycle``'s one end, so every socket of the conversation is told and
``run_finished`` fires once, whichever worker (or command) sweeps: each run is claimed
by one conditional UPDATE.

``sweep_once`` is one sweep (``manage.py agent_sessions_sweep`` runs it). While a process
has sockets, ``sweeper`` runs one every ``RUN_LEASE_SECONDS / 4`` seconds (at most
``SWEEP_SECONDS``); a conversation's next run, and a ``cancel``, end its lost run at once.
The sweeper (and the command) also removes the temporary chats that are due
(``store.temporary.sweep``: past ``TEMPORARY_TTL``, or left by their last page).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

from django_agent_sessions.conf import app_settings
from django_agent_sessions.store import approvals as store_approvals
from django_agent_sessions.store import pending
from django_agent_sessions.store import temporary as store_temporary
from django_agent_sessions.streaming.running import lifecycle

logger = logging.getLogger(__name__)


async def sweep_once(channel_layer: Any) -> tuple[int, int]:
    """End lost runs and expired approval waits; how many of each."""
    lost = await lifecycle.expire_lost(channel_layer)
    expired = 0
    for session_pk in await pending.overdue_conversations():
        expired += await lifecycle.end_waiting(
            channel_layer,
            session_pk,
            reason=store_approvals.EXPIRED,
            user=None,  # run_finished gets the conversation's owner
            only_overdue=True,
        )
    return lost, expired


class LostRunSweeper:
    """While a process has sockets, it sweeps (``sweep_once``) every little while.

    Consumers hold the sweeper while connected (``acquire``/``release``); it stops with
    the last one.
    """

    def __init__(self) -> None:
        self._holders = 0
        self._task: asyncio.Task[None] | None = None

    def acquire(self, channel_layer: Any) -> None:
        self._holders += 1
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            # In a context of its own: it outlives the request or socket that started it,
            # so its database hops must not use that request's thread (asgiref gives a
            # finished request's context a new thread, and a connection never closed).
            self._task = contextvars.Context().run(loop.create_task, self._sweep(channel_layer))

    def release(self) -> None:
        self._holders = max(0, self._holders - 1)
        if self._holders == 0 and self._task is not None and not app_settings.SWEEP_IN_WORKERS:
            self._task.cancel()
            self._task = None

    async def _sweep(self, channel_layer: Any) -> None:
        while True:
            lease, most = app_settings.RUN_LEASE_SECONDS, app_settings.SWEEP_SECONDS
            await asyncio.sleep(min(float(lease) / 4, float(most)))
            try:
                await sweep_once(channel_layer)
                await store_temporary.asweep()  # the temporary chats due for removal
            except Exception:
                logger.exception("Sweeping lost runs and expired approvals failed.")


sweeper = LostRunSweeper()
