"""A run's task, from its start (or its resumption after approvals) to its pause or end.
``start`` records the run and starts its task; ``decide`` records a decision on a tool call
and, when it was the run's last, resumes the run here (or has a task do it: ``dispatch``).
The task runs in the run's span (``traced``); when its stream is over, the run waits in
the database (``_pause``) or ends through ``lifecycle.end``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from django_agent_sessions import signals
from django_agent_sessions.budgets import quotas
from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.values import parse_duration
from django_agent_sessions.models import AgentRun
from django_agent_sessions.store import approvals as store_approvals
from django_agent_sessions.store import open_calls
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.store.usage import usage_counts
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.delivery.groups import group_name
from django_agent_sessions.streaming.running import dispatch, lifecycle, outcomes, paused, traced
from django_agent_sessions.streaming.running.active_runs import ActiveRun, RunRequest
from django_agent_sessions.streaming.running.message import UserInput
from django_agent_sessions.streaming.running.outcomes import CANCELLED, COMPLETED, FAILED
from django_agent_sessions.streaming.running.steering import name_unsteered, take_steering
from django_agent_sessions.streaming.running.streamed_run import StreamedRun

logger = logging.getLogger(__name__)


async def decide(
    request: Callable[[], Awaitable[RunRequest]],
    conversation_pk: int,
    call_id: str,
    *,
    approve: bool,
    message: str,
    user: Any,
    user_id: Any,
    channel_layer: Any,
) -> bool:
    """Record a decision and tell every tab; False if no such call is pending.

    The decision that leaves no call pending claims the run, and it resumes here:
    ``request()`` builds its agent, and its state is restored (a failure ends the run,
    every call with an output). The tabs learn the decision once the resumed run
    listens for ``cancel``, so a Stop sent the moment it arrives reaches the run.
    """
    # A run past its expiry is ended (and every tab told) before anything counts.
    await lifecycle.end_waiting(
        channel_layer,
        conversation_pk,
        reason=store_approvals.EXPIRED,
        user=user,
        only_overdue=True,
    )
    decided = await store_approvals.decide(
        conversation_pk,
        call_id,
        approve=approve,
        message=message,
        user_id=user_id,
        lease_seconds=dispatch.resuming_lease(),
        hand_off=dispatch.offloaded(),
    )
    if decided is None:
        return False
    resolved = {
        "type": "approval.resolved",
        "run_id": decided.run_id,
        "seq": decided.seq,
        "call_id": decided.call_id,
        "approve": decided.approve,
    }

    async def tell() -> None:
        group = group_name(conversation_pk)
        await fanout.broadcast(channel_layer, group, conversation_pk, resolved)

    if decided.resume is None or decided.resume.execution:
        await tell()
        if decided.resume is not None:  # handed off: a task resumes it
            await dispatch.enqueue_resumption(decided.resume, conversation_pk, channel_layer, user)
        return True
    try:
        run_request = await request()
        state = await paused.restore(
            run_request.agent,
            decided.resume.state,
            decided.resume.decisions,
            context=run_request.context,
        )
        await resume(run_request, decided.resume, state, channel_layer=channel_layer, before=tell)
    except Exception:
        logger.exception("Could not resume run %s.", decided.run_id)
        await tell()
        await lifecycle.fail_claimed(
            decided.resume,
            conversation_pk=conversation_pk,
            channel_layer=channel_layer,
            user=user,
        )
    return True


async def start(
    request: RunRequest, *, channel_layer: Any, started: store_runs.StartedRun | None = None
) -> ActiveRun | None:
    """Record and start a run (``started``: recorded with its new conversation already);
    None if the conversation already has one.

    The record comes first: its id is the run's id on the wire from the first event on.
    Runs of the conversation whose worker died are ended on the way, and told.
    """
    started = started or await store_runs.start(
        request.conversation_pk,
        agent_name=request.agent.name,
        lease_seconds=float(app_settings.RUN_LEASE_SECONDS),
        client_id=request.client_id,
    )
    if started is None:
        return None
    await lifecycle.tell_lost(channel_layer, started.expired)
    streamed = StreamedRun(
        request.agent,
        UserInput(request.text, request.parts, request.files),
        run_id=started.run_id,
        session=request.session,
        context=request.context,
        client_id=request.client_id,
        **_streaming_limits(),
    )
    active = await _joined(request, streamed, started, channel_layer)
    await _launch(active, request, resumed=False)
    return active


async def resume(
    request: RunRequest,
    claimed: store_approvals.Resume,
    state: Any,
    *,
    channel_layer: Any,
    before: Callable[[], Awaitable[None]],
) -> ActiveRun:
    """Run a claimed run (``running`` again) on from ``state``, its decisions applied.

    ``before`` (telling the tabs the decision) runs once the run listens for ``cancel``,
    so a Stop sent the moment the decision arrives reaches it.
    """
    streamed = StreamedRun(
        request.agent,
        "",
        run_id=claimed.run_id,
        session=request.session,
        state=state,
        first_seq=claimed.seq,
        **_streaming_limits(),
    )
    started = store_runs.StartedRun(claimed.run_pk, claimed.run_id, claimed.history_item_id)
    active = await _joined(request, streamed, started, channel_layer)
    await before()
    await _launch(active, request, resumed=True)
    return active


async def _joined(
    request: RunRequest,
    streamed: StreamedRun,
    started: store_runs.StartedRun,
    channel_layer: Any,
) -> ActiveRun:
    """The run's task-to-be, listening for ``cancel`` and keeping its lease already."""
    active = ActiveRun(
        streamed,
        started,
        session_pk=request.conversation_pk,
        channel_layer=channel_layer,
        user=request.user,
    )
    active.detached = request.detached
    take_steering(streamed, started.pk, request.session)
    await active.join()
    return active


def _streaming_limits() -> dict[str, Any]:
    return {
        "flush_seconds": app_settings.DELTA_FLUSH_SECONDS,
        "flush_bytes": app_settings.DELTA_FLUSH_BYTES,
        "max_bytes": app_settings.MAX_RUN_BYTES,
        "run_config": traced.run_config(),
        "run_tokens": quotas.setting("RUN_TOKENS"),
    }


async def _launch(active: ActiveRun, request: RunRequest, *, resumed: bool) -> None:
    await lifecycle.send_robust(
        signals.run_started,
        run_id=active.run_id,
        session_id=request.session_id,
        agent_name=request.agent.name,
        user=request.user,
        resumed=resumed,
    )
    live = traced.live(active, request, resumed=resumed, pause=_pause, finish=_finish)
    active.task = asyncio.create_task(live)


async def _pause(active: ActiveRun) -> None:
    """Park the run in the database until its calls are decided and publish the
    requests. The task then ends: a waiting run holds no task or connection."""
    outcome = active.streamed.outcome
    # Numbered before they are stored, so the record knows the last seq sent.
    events = active.streamed.approval_events(expires_at="")
    try:
        expires = await store_approvals.pause(
            active.started.pk,
            state=outcome.state,
            seq=active.streamed.seq,
            calls=outcome.calls,
            usage=usage_counts(outcome.usage),
            timeout=parse_duration(app_settings.APPROVAL_TIMEOUT),
            spent=active.streamed.spending.take(),
        )
    except Exception:
        logger.exception("Could not store run %s while it waits.", active.run_id)
        outcome.status, outcome.error = FAILED, "The paused run could not be stored."
        await _finish(active, None)
        return
    await _leave(active)
    if expires is None:
        logger.warning("Run %s was taken over before it could wait.", active.run_id)
        return
    try:
        # Twice, as the end of a run: a page that misses one shows no buttons.
        for event in events:
            event["expires_at"] = expires.isoformat()
            await active.publish(event, copies=2)
    except Exception:
        logger.exception("Could not publish the approval requests of run %s.", active.run_id)


async def _finish(active: ActiveRun, terminal: dict[str, Any] | None) -> AgentRun | None:
    """The end of a run whose task is over: its record, or None. Keeps the lease till then."""
    streamed, outcome = active.streamed, active.streamed.outcome
    if active.interrupted:  # its worker stopped it (``drain``): the end it made is replaced
        seq = streamed.seq + 1 if terminal is None else int(terminal["seq"])
        terminal = outcomes.interrupted_end(outcome, active.run_id, seq)
    elif terminal is None:
        # Publishing failed (error set), the pause could not be stored, or this task was
        # cancelled (e.g. at worker shutdown): the run stopped before its own end.
        outcome.status = FAILED if outcome.error else CANCELLED
        terminal = streamed.final_event()
    ending = lifecycle.Ending(
        active.session_pk,
        terminal,
        active.user,
        outcomes.usage_dict(outcome.usage),
        followed=active.followed,
    )

    spent = streamed.spending.take()  # once: each try of the record writes all of it

    async def record() -> AgentRun | None:
        return await store_runs.finish(
            active.started.pk,
            status=outcome.status,
            usage=outcome.usage,
            spent=spent,
            error=outcome.error,
            error_code=terminal.get("error", {}).get("code", ""),
            # Shown of a reply never saved: history shows it after a reload, with the status.
            partial_text="" if outcome.status == COMPLETED else streamed.snapshot()["text"],
            outputs=streamed.outputs,
            open_call_text=open_calls.INTERRUPTED_CALL if active.interrupted else "",
            session_pk=active.session_pk,
        )

    async def leave() -> None:
        # Kept until now: the lease, while the record was tried again.
        await _leave(active)
        await name_unsteered(active.started.pk, ending.terminal)

    try:
        return await lifecycle.end(active.layer, ending, record, retry=True, recorded_then=leave)
    except Exception:
        logger.exception("Could not record the end of run %s.", active.run_id)
        return None


async def _leave(active: ActiveRun) -> None:
    try:
        await active.leave()
    except Exception:
        logger.exception("Run %s could not leave its control group.", active.run_id)
