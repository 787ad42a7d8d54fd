"""The SDK's half of tool approvals: a paused run to text and back. No ORM.

The stored form is the SDK's own: ``RunResult.to_state().to_string()``, restored with
``RunState.from_string()``. The run context (what tools see as ``ctx.context``: the
user, the scope, the session) is never stored; the resuming worker builds a fresh one
for the conversation's owner, as it does for a new run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agents import Agent, RunContextWrapper
from agents.items import ToolApprovalItem
from agents.run_state import RunState

from django_agent_sessions.store.approvals import RequestedCall


def _no_context(context: Any) -> Mapping[str, Any]:
    return {}


def pause(result: Any) -> tuple[str, list[RequestedCall]]:
    """The stored form of a streamed result that stopped on approvals, and its calls."""
    state: RunState[Any, Any] = result.to_state()
    stored = state.to_json(context_serializer=_no_context)
    # The SDK keeps a mapping context as it is (the serializer sees only other kinds): a
    # project's dict context may hold secrets, or objects JSON cannot encode.
    if isinstance(stored.get("context"), dict):
        stored["context"]["context"] = {}
    text = json.dumps(stored)
    return text, [requested_call(item) for item in result.interruptions]


def requested_call(item: ToolApprovalItem) -> RequestedCall:
    raw = item.raw_item
    get = raw.get if isinstance(raw, dict) else lambda key: getattr(raw, key, None)
    call_id = get("call_id") or get("id") or ""
    arguments = get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=True)
    name = str(item.tool_name or get("name") or "")
    return RequestedCall(
        call_id=str(call_id),
        name=name,
        arguments=arguments,
        description=_description(getattr(item, "agent", None), name),
    )


def _description(agent: Any, tool_name: str) -> str:
    """What the tool does, as the agent that called it describes it ("" if unknown)."""
    for tool in getattr(agent, "tools", None) or []:
        if getattr(tool, "name", None) == tool_name:
            description = getattr(tool, "description", "")
            return description if isinstance(description, str) else ""
    return ""


async def restore(
    agent: Agent[Any],
    state_text: str,
    decisions: Mapping[str, tuple[bool, str]],
    *,
    context: Any,
) -> RunState[Any, Any]:
    """The paused run, with every decision applied, ready for ``Runner.run_streamed``.

    A pending call without a decision is rejected (it cannot happen through ``decide``,
    which resumes only when none is left; it keeps a stray state from hanging).
    """
    state: RunState[Any, Any] = await RunState.from_string(
        agent, state_text, context_override=RunContextWrapper(context=context)
    )
    for item in state.get_interruptions():
        approved, message = decisions.get(requested_call(item).call_id, (False, ""))
        if approved:
            state.approve(item)
        else:
            state.reject(item, rejection_message=message or None)
    return state
