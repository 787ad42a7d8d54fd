"""What a task needs to run a claimed execution: its ``RunRequest``, rebuilt from the
run's order (``store.orders``) where a tab's worker builds it from the visitor.

A task has no connection: the agent factory and ``AGENT_SESSIONS["RUN_CONTEXT"]`` get a
scope of type ``"agent_sessions.task"`` with the conversation's owner as ``user``, its
``session_id`` and the run's ``origin`` ("tab", "code" or "schedule").
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser

from django_agent_sessions.session import DjangoSession
from django_agent_sessions.store.orders import Claimed
from django_agent_sessions.streaming.running.active_runs import RunRequest
from django_agent_sessions.streaming.running.empty_history import EmptyHistorySession
from django_agent_sessions.streaming.visiting.agent_loading import load_agent
from django_agent_sessions.streaming.visiting.context import AgentRunContext, run_context

SCOPE_TYPE = "agent_sessions.task"


def scope_of(claimed: Claimed, user: Any) -> dict[str, Any]:
    return {
        "type": SCOPE_TYPE,
        "user": user,
        "session_id": claimed.session_id,
        "origin": claimed.order.origin,
    }


async def request_of(claimed: Claimed) -> RunRequest:
    """The run request of ``claimed`` (raises what loading its agent raises)."""
    owner = claimed.owner
    user = owner if owner is not None else AnonymousUser()
    scope = scope_of(claimed, user)
    agent = await load_agent(scope, claimed.order.agent or None)
    message = claimed.order.input
    parts = tuple(message.get("parts") or ())
    # A start recorded with no item before it reads an empty history without a hop.
    empty = claimed.resume is None and claimed.history_item_id == 0
    session_class = EmptyHistorySession if empty else DjangoSession
    session = session_class(claimed.session_id, owner=owner, offload_chars=0 if parts else None)
    context = claimed.order.context
    if context is None:
        context = run_context(AgentRunContext(user, claimed.session_id, session, scope))
    return RunRequest(
        agent=agent,
        text=str(message.get("text", "")),
        parts=parts,
        files=tuple(message.get("files") or ()),
        session=session,
        context=context,
        conversation_pk=claimed.session_pk,
        session_id=claimed.session_id,
        user=user,
        client_id=str(message.get("client_id", "")),
        detached=claimed.order.detached,
    )
