"""One execution of a run, by whichever task claims it first.

``execute`` claims the execution (``store.orders.claim``: a task delivered twice, retried
or redelivered after its worker died finds it taken and does nothing), rebuilds the
run's request, and starts or resumes the run exactly as a tab's worker does
(``running.run_task``): the same events and seq through the same channel layer, the same
lease, the same ``end()``. A Stop that reached the order before the run listened for it
(``store.orders.stop``) is honoured once it listens.
"""

from __future__ import annotations

import logging
from typing import Any

from django_agent_sessions.conf import app_settings
from django_agent_sessions.layers import stream_layer
from django_agent_sessions.store import approvals as store_approvals
from django_agent_sessions.store import orders as store_orders
from django_agent_sessions.store.runs import StartedRun
from django_agent_sessions.streaming.running import lifecycle, paused, run_task
from django_agent_sessions.streaming.running.active_runs import ActiveRun
from django_agent_sessions.streaming.working.requests import request_of

logger = logging.getLogger(__name__)

TAKEN, RAN = "taken", "ran"


async def execute(run_id: str, execution: int, *, worker: str) -> str:
    """Claim and run execution ``execution`` of run ``run_id`` to its pause or end:
    ``RAN``, or ``TAKEN`` when another delivery had it or the run had ended."""
    claimed = await store_orders.claim(
        run_id, execution, worker=worker, lease_seconds=float(app_settings.RUN_LEASE_SECONDS)
    )
    return await run_claimed(claimed) if claimed is not None else _taken(run_id, execution)


def claim_here(run_id: str, execution: int, *, worker: str) -> store_orders.Claimed | None:
    """Claim execution ``execution`` of run ``run_id`` on the calling sync thread (a
    task's own, with its own connection); None, logged, if it was taken or had ended."""
    claimed = store_orders.claim.here(
        run_id, execution, worker=worker, lease_seconds=float(app_settings.RUN_LEASE_SECONDS)
    )
    if claimed is None:
        _taken(run_id, execution)
    return claimed


def taken_here(run_id: str, execution: int) -> bool:
    """Whether execution ``execution`` of run ``run_id`` is claimed already, read on the
    calling sync thread; logged when it is."""
    taken = store_orders.claimed_already.here(run_id, execution)
    if taken:
        _taken(run_id, execution)
    return taken


def claim_waiting_here(limit: int, *, worker: str) -> list[store_orders.Claimed]:
    """Claim up to ``limit`` starts whose tasks wait in the queue, on the calling sync
    thread (``store.orders.claim_waiting``)."""
    lease = float(app_settings.RUN_LEASE_SECONDS)
    claimed = store_orders.claim_waiting.here(limit, worker=worker, lease_seconds=lease)
    if claimed:
        logger.info("Claimed %s runs waiting in the queue.", len(claimed))
    return claimed


def _taken(run_id: str, execution: int) -> str:
    logger.info("Run %s execution %s was taken or has ended; nothing to do.", run_id, execution)
    return TAKEN


async def run_claimed(claimed: store_orders.Claimed) -> str:
    """Run a claimed execution to its pause or end: ``RAN``."""
    layer = stream_layer()
    active = await _launched(claimed, layer)
    if active is None:
        return RAN
    if await store_orders.stop_requested(claimed.run_pk):
        active.cancel()  # stopped before it listened
    assert active.task is not None
    await active.task
    return RAN


async def _launched(claimed: store_orders.Claimed, layer: Any) -> ActiveRun | None:
    """The run's task, started or resumed; None if it could not be (the run is ended,
    every call with an output, every tab told)."""
    try:
        request = await request_of(claimed)
        if claimed.resume is None:
            started = StartedRun(claimed.run_pk, claimed.run_id, claimed.history_item_id)
            return await run_task.start(request, channel_layer=layer, started=started)
        resume = claimed.resume
        state = await paused.restore(
            request.agent, resume.state, resume.decisions, context=request.context
        )
        return await run_task.resume(request, resume, state, channel_layer=layer, before=_nothing)
    except Exception:
        logger.exception("Could not run run %s.", claimed.run_id)
        await lifecycle.fail_claimed(
            claimed.resume or _as_resume(claimed),
            conversation_pk=claimed.session_pk,
            channel_layer=layer,
            user=claimed.owner,
        )
        return None


def _as_resume(claimed: store_orders.Claimed) -> store_approvals.Resume:
    """A start that could not begin, in the terms ``lifecycle.fail_claimed`` ends."""
    return store_approvals.Resume(
        run_pk=claimed.run_pk,
        run_id=claimed.run_id,
        agent_name="",
        state="",
        seq=claimed.seq,
        history_item_id=claimed.history_item_id,
        decisions={},
    )


async def _nothing() -> None:
    """A resumption's tabs were told of the decision when it was made."""
