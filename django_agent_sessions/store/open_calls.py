"""No end without a valid history: an output for every call a run leaves open.

Whatever ends a run (completed or not), the transaction that ends it stores an output
for each of its function calls that the conversation holds without one: the output the
run produced but did not save, the rejection of a rejected call, or a text that says how
the run ended (the caller's). A call without its output makes every later model request
of the conversation fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.tool import DEFAULT_APPROVAL_REJECTION_MESSAGE
from django.db.models import Subquery

from django_agent_sessions import serialization
from django_agent_sessions.conf import app_settings
from django_agent_sessions.item_views import OUTPUT_SUFFIX
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem, ToolApproval
from django_agent_sessions.store import items as store_items

# What an open call's output says, by how its run ended (the model reads it next turn).
STOPPED_CALL = "The run was stopped before this tool call returned; its result was not saved."
FAILED_CALL = "The run failed before this tool call returned; its result was not saved."
LOST_CALL = "The server running this tool call stopped before it returned."
NOT_RESUMED_CALL = "This tool call was approved but not run: the paused run could not be resumed."
INTERRUPTED_CALL = "The server restarted before this tool call returned; its result was not saved."

REJECTION_OUTPUT = DEFAULT_APPROVAL_REJECTION_MESSAGE


def close_open_calls(
    session_pk: int,
    run_pk: int,
    using: str,
    *,
    text: str,
    outputs: Mapping[str, Any] | None = None,
) -> list[str]:
    """Store an output for each function call of the run held without one; their ids.

    Run inside the transaction that ends the run, after the conversation's lock. The
    output is the one the run produced (``outputs``), else a rejected call's rejection,
    else ``text``.
    """
    # The run's first item, as a subquery: one statement, not a read of the run first.
    since = AgentRun.objects.filter(pk=run_pk).values("history_item_id")[:1]
    rows = (
        SessionItem.objects.filter(session_id=session_pk, id__gt=Subquery(since))
        .exclude(call_id="")
        .order_by("id")
        .values_list("item_type", "call_id")
    )
    calls, answered = [], set()
    for item_type, call_id in rows:
        if item_type == "function_call":
            calls.append(call_id)
        elif item_type.endswith(OUTPUT_SUFFIX):
            answered.add(call_id)
    missing = [call_id for call_id in dict.fromkeys(calls) if call_id not in answered]
    if missing:
        _store_outputs(session_pk, run_pk, using, missing, text, outputs or {})
    return missing


def _store_outputs(
    session_pk: int,
    run_pk: int,
    using: str,
    missing: list[str],
    text: str,
    outputs: Mapping[str, Any],
) -> None:
    rejected = dict(
        ToolApproval.objects.filter(
            run_id=run_pk, call_id__in=missing, decision=ToolApproval.Decision.REJECTED
        ).values_list("call_id", "message")
    )
    items = [
        outputs.get(call_id)
        or {
            "type": "function_call_output",
            "call_id": call_id,
            "output": (rejected[call_id] or REJECTION_OUTPUT) if call_id in rejected else text,
        }
        for call_id in missing
    ]
    session_id = AgentSession.objects.values_list("session_id", flat=True).get(pk=session_pk)
    encoded = serialization.encode_items(
        items, max_bytes=app_settings.MAX_ITEM_BYTES, max_depth=app_settings.MAX_ITEM_DEPTH
    )
    store_items.append_items(store_items.Scope(session_id, None, using), encoded, "")
