"""Runs whose worker died: they end visibly, within about ``RUN_LEASE_SECONDS``.

A worker renews its run's lease every ``RUN_LEASE_SECONDS / 3``. A worker killed mid-run
(SIGKILL, OOM, a lost machine) renews nothing and says nothing; the other workers notice
its lease expiring. While a process has sockets, ``sweeper`` looks every
``RUN_LEASE_SECONDS / 4`` seconds (at most ``SWEEP_SECONDS``) for running runs whose lease expired;
each is claimed by exactly one worker (a conditional UPDATE), marked failed with code
``worker_lost``, announced to every socket of its conversation as ``run.failed`` and
passed to ``run_finished`` once. A ``cancel`` for such a run, and the next run of its
conversation, do the same at once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from agents.usage import Usage
from django.utils.translation import gettext as _

from django_agent_sessions import signals
from django_agent_sessions.conf import app_settings
from django_agent_sessions.websocket import fanout, records
from django_agent_sessions.websocket.outcomes import usage_dict
from django_agent_sessions.websocket.runs import group_name, send_robust

logger = logging.getLogger(__name__)


def lost_worker_event(run_id: str) -> dict[str, Any]:
    """The terminal event of a run whose worker died. It comes from another worker,
    which does not know the run's sequence numbers: its ``seq`` is null."""
    return {
        "type": "run.failed",
        "run_id": run_id,
        "seq": None,
        "error": {
            "code": records.WORKER_LOST,
            "message": _("The server running this reply stopped. Please try again."),
        },
    }


async def announce_expired(layer: Any, expired: list[records.ExpiredRun]) -> None:
    """Tell every socket of each conversation, and ``run_finished``, that a run is lost."""
    for run in expired:
        try:
            group, event = group_name(run.session_pk), lost_worker_event(run.run_id)
            await fanout.broadcast(layer, group, run.session_pk, event)
        except Exception:
            logger.exception("Could not announce the end of lost run %s.", run.run_id)
        record = await records.expired_record(run.pk)
        await send_robust(
            signals.run_finished,
            run=record,
            usage=usage_dict(Usage()),
            user=record.session.owner,
        )


async def expire_lost_runs(layer: Any, session_pk: int | None = None) -> int:
    """Mark and announce the runs whose lease expired; how many."""
    expired = await records.expire_stale_runs(session_pk)
    if expired:
        await announce_expired(layer, expired)
    return len(expired)


class LostRunSweeper:
    """While a process has sockets, it looks for runs whose worker died.

    Every ``RUN_LEASE_SECONDS / 4`` seconds (at most ``SWEEP_SECONDS``), one query finds
    running runs whose lease expired; each is claimed by exactly one worker, marked failed
    (``worker_lost``) and announced to its conversation's sockets. Consumers hold the
    sweeper while connected (``acquire``/``release``); it stops with the last one.
    """

    def __init__(self) -> None:
        self._holders = 0
        self._task: asyncio.Task[None] | None = None

    def acquire(self, layer: Any) -> None:
        self._holders += 1
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._task = loop.create_task(self._sweep(layer))

    def release(self) -> None:
        self._holders = max(0, self._holders - 1)
        if self._holders == 0 and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _sweep(self, layer: Any) -> None:
        while True:
            lease, most = app_settings.RUN_LEASE_SECONDS, app_settings.SWEEP_SECONDS
            await asyncio.sleep(min(float(lease) / 4, float(most)))
            try:
                await expire_lost_runs(layer)
            except Exception:
                logger.exception("Looking for runs of dead workers failed.")


sweeper = LostRunSweeper()
