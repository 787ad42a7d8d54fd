"""Runs waiting for approvals, seen from the websocket layer: resuming one, failing one
that cannot be resumed, ending one (cancelled or expired). Parking a run is ``runs``'s;
the database side is ``approvals``.
"""

from __future__ import annotations

from typing import Any

from agents.usage import Usage
from django.utils.translation import gettext as _

from django_agent_sessions import signals
from django_agent_sessions.conf import app_settings
from django_agent_sessions.websocket import approvals, fanout, records, runs
from django_agent_sessions.websocket.events import StreamedRun
from django_agent_sessions.websocket.outcomes import FAILED, usage_dict


async def resume_run(
    request: runs.RunRequest, resume: approvals.Resume, state: Any, *, channel_layer: Any
) -> runs.ActiveRun:
    """Start a run that ``approvals.decide`` claimed (``running`` again) from ``state``,
    the paused run restored with its decisions. Its events continue its numbering."""
    streamed = StreamedRun(
        request.agent,
        "",
        run_id=resume.run_id,
        session=request.session,
        flush_seconds=app_settings.DELTA_FLUSH_SECONDS,
        flush_bytes=app_settings.DELTA_FLUSH_BYTES,
        max_bytes=app_settings.MAX_RUN_BYTES,
        state=state,
        first_seq=resume.seq,
    )
    started = records.StartedRun(
        pk=resume.run_pk, run_id=resume.run_id, history_item_id=resume.history_item_id
    )
    active = runs.ActiveRun(
        streamed,
        started,
        session_pk=request.conversation_pk,
        channel_layer=channel_layer,
        user=request.user,
    )
    await runs.send_robust(
        signals.run_started,
        run_id=resume.run_id,
        session_id=request.session_id,
        agent_name=request.agent.name,
        user=request.user,
        resumed=True,
    )
    await active.start()
    return active


async def fail_claimed_run(
    resume: approvals.Resume, *, conversation_pk: int, channel_layer: Any, user: Any
) -> None:
    """A claimed run that could not be resumed (no agent, a state the SDK refuses)."""
    record = await records.finish_run(
        resume.run_pk, status=FAILED, usage=Usage(), error="The paused run could not be resumed."
    )
    event = {
        "type": "run.failed",
        "run_id": resume.run_id,
        "seq": resume.seq + 1,
        "error": {"code": "agent_error", "message": _("The assistant is not available.")},
    }
    group = runs.group_name(conversation_pk)
    await fanout.broadcast(channel_layer, group, conversation_pk, event, copies=2)
    if record is not None:
        await runs.send_run_finished(record, usage_dict(Usage()), user)


async def end_waiting_run(
    conversation_pk: int,
    *,
    reason: str,
    channel_layer: Any,
    user: Any,
    only_overdue: bool = False,
) -> bool:
    """End the conversation's waiting run as cancelled (``reason``: "cancelled" or
    "expired"), rejecting its pending calls. False if there was none to end."""
    ended = await approvals.end_waiting(conversation_pk, reason=reason, only_overdue=only_overdue)
    if ended is None:
        return False
    group = runs.group_name(conversation_pk)
    for call_id in ended.call_ids:
        resolved = {
            "type": "approval.resolved",
            "run_id": ended.run_id,
            "call_id": call_id,
            "approve": False,
            "reason": reason,
        }
        await fanout.broadcast(channel_layer, group, conversation_pk, resolved)
    cancelled = {"type": "run.cancelled", "run_id": ended.run_id, "seq": ended.seq + 1}
    await fanout.broadcast(channel_layer, group, conversation_pk, cancelled, copies=2)
    record = await approvals.finished_record(ended.run_pk)
    await runs.send_run_finished(record, usage_dict(Usage()), user)
    return True
