"""A run's life, owned here: start, pause, resume, cancel, expiry, loss, and one end.

    starting -> running -> (waiting -> running)* -> completed | cancelled | failed
    running -> lost      (its worker died: failed, ``worker_lost``)
    waiting -> expired   (nobody decided in time: cancelled, its calls rejected)

Every path that ends a run goes through ``end()``, which

1. **records**: one store transaction commits the end (status, partial text, an output
   for every call left without one) and frees the conversation; while the database is
   unavailable (a restart) it is tried again for about 8 s, the run's lease kept;
2. **tells**: the ``approval.resolved`` of the calls the end rejected, then the terminal
   event, to every socket of the conversation (the terminal twice through the layer,
   which may lose one; sockets drop the copy by ``seq``);
3. **fires** ``run_finished``, once.

An end whose record step finds the run already ended (by another worker or the sweep)
tells nothing: whoever ended it has told. So a client that sends the moment a terminal
frame arrives is never told ``busy``. The database side is ``store.runs`` and
``store.approvals``; the running task is ``runs.ActiveRun``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agents.usage import Usage
from django.utils.translation import gettext as _

from django_agent_sessions import signals
from django_agent_sessions.models import AgentRun
from django_agent_sessions.store import approvals as store_approvals
from django_agent_sessions.store import open_calls, pending
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.store.hops import UNAVAILABLE
from django_agent_sessions.streaming.delivery import fanout, layer
from django_agent_sessions.streaming.delivery.groups import control_group_name, group_name
from django_agent_sessions.streaming.running.outcomes import (
    FAILED,
)

logger = logging.getLogger(__name__)

# Waits between attempts to record an end while the database is unavailable.
_RETRY_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0)
_NO_USAGE = {"requests": 0, "input_tokens": 0, "output_tokens": 0, "total_tokens": 0}


@dataclass
class Ending:
    """What ``end()`` tells once the end is recorded."""

    session_pk: int
    terminal: dict[str, Any]
    user: Any
    usage: dict[str, int] = field(default_factory=lambda: dict(_NO_USAGE))
    resolved: list[dict[str, Any]] = field(default_factory=list)
    # Whether other workers' sockets follow the run's every event (see ``fanout``); an
    # end that no running task tells (waiting, lost) says so, as it always did.
    followed: bool = True


async def end(
    channel_layer: Any,
    ending: Ending,
    record: Callable[[], Awaitable[AgentRun | None]],
    *,
    retry: bool = False,
    recorded_then: Callable[[], Awaitable[None]] | None = None,
) -> AgentRun | None:
    """Record, then tell, then fire (see the module). The record, or None.

    ``recorded_then`` runs between the record step (whatever its result) and telling.
    """
    try:
        recorded = await _recorded(record, retry=retry)
    finally:
        if recorded_then is not None:
            await recorded_then()
    if recorded is None:
        return None
    if ending.terminal["type"] == "run.completed":
        # Lets a page rate the reply it just streamed (``store.runs.finish`` reads it).
        ending.terminal["reply_item_id"] = getattr(recorded, "reply_item_id", None)
    user_item_id = getattr(recorded, "user_item_id", None)
    if user_item_id is not None:
        # The person's message as stored: a page offers "Branch from here" on the message
        # it just sent, which its live item.completed (sent before it was stored) could not.
        ending.terminal["user_item_id"] = user_item_id
    group = group_name(ending.session_pk)
    try:
        for event in ending.resolved:
            await fanout.broadcast(channel_layer, group, ending.session_pk, event)
        await fanout.broadcast(
            channel_layer,
            group,
            ending.session_pk,
            ending.terminal,
            followed=ending.followed,
            copies=2,
        )
    except Exception:
        logger.exception("Could not publish the end of run %s.", ending.terminal["run_id"])
    await send_run_finished(recorded, ending.usage, ending.user)
    return recorded


async def _recorded(
    record: Callable[[], Awaitable[AgentRun | None]], *, retry: bool
) -> AgentRun | None:
    for delay in (*_RETRY_DELAYS, None) if retry else (None,):
        try:
            return await record()
        except UNAVAILABLE:
            if delay is None:
                raise
            # The server restarted or the connection broke: the next hop reconnects.
            logger.warning("Recording a run's end failed; trying again in %s s.", delay)
            await asyncio.sleep(delay)
    return None  # pragma: no cover - the loop returns or raises


async def fail_claimed(
    claimed: store_approvals.Resume, *, conversation_pk: int, channel_layer: Any, user: Any
) -> None:
    """A claimed run that could not be resumed (no agent, a state the SDK refuses)."""
    terminal = {
        "type": "run.failed",
        "run_id": claimed.run_id,
        "seq": claimed.seq + 1,
        "error": {"code": "agent_error", "message": _("The assistant is not available.")},
    }

    async def record() -> AgentRun | None:
        return await store_runs.finish(
            claimed.run_pk,
            status=FAILED,
            usage=Usage(),
            error="The paused run could not be resumed.",
            error_code="agent_error",
            open_call_text=open_calls.NOT_RESUMED_CALL,
            session_pk=conversation_pk,
        )

    await end(channel_layer, Ending(conversation_pk, terminal, user), record)


# Cancel, expiry and loss ------------------------------------------------------------


async def cancel(channel_layer: Any, session_pk: int, *, run_id: str | None, user: Any) -> None:
    """Stop the conversation's run (only run ``run_id``, when given), wherever it is."""
    # A run waiting for approvals has no task to cancel: it is ended in the database.
    if await end_waiting(
        channel_layer, session_pk, reason=store_approvals.CANCELLED, run_id=run_id, user=user
    ):
        return
    message: dict[str, Any] = {"type": "agent.cancel"}
    if run_id is not None:
        message["run_id"] = run_id
    await layer.retrying(channel_layer.group_send, control_group_name(session_pk), message)
    # A run whose worker died cannot answer: if its lease has expired, it ends now;
    # otherwise the sweep ends it.
    await expire_lost(channel_layer, session_pk)


async def end_waiting(
    channel_layer: Any,
    session_pk: int,
    *,
    reason: str,
    user: Any,
    run_id: str | None = None,
    only_overdue: bool = False,
) -> bool:
    """End the conversation's waiting run as cancelled (``reason``: "cancelled" or
    "expired"), its pending calls rejected. False if there was none to end."""
    ended = await store_approvals.end_waiting(
        session_pk, reason=reason, run_id=run_id, only_overdue=only_overdue
    )
    if ended is None:
        return False
    resolved = [
        {
            "type": "approval.resolved",
            "run_id": ended.run_id,
            "seq": ended.seq + number,
            "call_id": call_id,
            "approve": False,
            "reason": reason,
        }
        for number, call_id in enumerate(ended.call_ids, start=1)
    ]
    terminal = {
        "type": "run.cancelled",
        "run_id": ended.run_id,
        "seq": ended.seq + len(resolved) + 1,
    }

    async def record() -> AgentRun | None:  # ended above, in one transaction
        return await store_runs.record(ended.run_pk)

    await end(channel_layer, Ending(session_pk, terminal, user, resolved=resolved), record)
    return True


async def expire_overdue(channel_layer: Any, session_pk: int, user: Any) -> None:
    """End the conversation's waiting run if it is past its expiry."""
    if await pending.overdue(session_pk):
        await end_waiting(
            channel_layer, session_pk, reason=store_approvals.EXPIRED, user=user, only_overdue=True
        )


def lost_worker_event(run_id: str, seq: int) -> dict[str, Any]:
    """The terminal event of a run whose worker died, from another worker: numbered
    after the last event the dead worker noted (at its last lease renewal). A tab may
    have been sent later ones: it shows a run's end once, whatever its ``seq``."""
    return {
        "type": "run.failed",
        "run_id": run_id,
        "seq": seq,
        "error": {
            "code": store_runs.WORKER_LOST,
            "message": _("The server running this reply stopped. Please try again."),
        },
    }


async def expire_lost(channel_layer: Any, session_pk: int | None = None) -> int:
    """End the runs whose lease expired (their worker died), and tell; how many."""
    expired = await store_runs.expire_stale(session_pk)
    await tell_lost(channel_layer, expired)
    return len(expired)


async def tell_lost(channel_layer: Any, expired: Any) -> None:
    """Tell and fire for lost runs whose end is recorded already."""
    for run in expired:
        ending = Ending(run.session_pk, lost_worker_event(run.run_id, run.seq + 1), user=None)

        async def record(pk: int = run.pk) -> AgentRun | None:
            return await store_runs.record(pk)

        try:
            await end(channel_layer, ending, record)
        except Exception:
            logger.exception("Could not announce the end of lost run %s.", run.run_id)


async def send_run_finished(record: AgentRun, usage: dict[str, int], user: Any) -> None:
    """``run_finished``; for a run that waited, with how each call was decided."""
    decided: list[dict[str, Any]] = []
    if user is None:
        user = record.session.owner
    if record.waited_at is not None:
        decided = await pending.summary(record.pk)
        if not any(usage.values()):  # ended while waiting: the usage stored at the pause
            usage = {
                "requests": record.requests,
                "input_tokens": record.input_tokens,
                "output_tokens": record.output_tokens,
                "total_tokens": record.total_tokens,
            }
    await send_robust(signals.run_finished, run=record, usage=usage, user=user, approvals=decided)


async def send_robust(signal: Any, **kwargs: Any) -> None:
    responses = await signal.asend_robust(sender=AgentRun, **kwargs)
    for receiver, response in responses:
        if isinstance(response, Exception):
            logger.error("A %s receiver failed: %r", receiver, response, exc_info=response)
