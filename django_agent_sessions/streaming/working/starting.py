"""Starting a run from code: ``start_run`` (async) and ``start_run_sync``, public as
``django_agent_sessions.start_run`` / ``start_run_sync``.

A webhook, a management command, an e-mail arriving or a schedule starts a run with no
tab open; a tab opened later follows it like any run. What applies to a person's
message applies here: one run per conversation (``busy``), and for a run with an owner
the rate limit and the token budgets. The run goes on when the last tab watching it
leaves (it was not started by one).

Where it executes follows ``AGENT_SESSIONS["RUNS"]``: ``"tasks"``, a task worker (the
agent is then a dotted path, and the context JSON: both cross processes); ``"inline"``,
this process: on the caller's event loop for ``start_run`` (a web worker's), or on this
process's run host for ``start_run_sync`` (the process must outlive the run: the
``agent_sessions_run`` command waits for it).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from agents import Agent
from django.contrib.auth.models import AnonymousUser
from django.utils.translation import gettext as _

from django_agent_sessions.budgets import quotas
from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import RunRefused
from django_agent_sessions.layers import stream_layer
from django_agent_sessions.session import DjangoSession
from django_agent_sessions.store import first_messages
from django_agent_sessions.store import orders as store_orders
from django_agent_sessions.streaming.running import dispatch, drain, run_task, spending
from django_agent_sessions.streaming.running.active_runs import RunRequest
from django_agent_sessions.streaming.visiting import ratelimit
from django_agent_sessions.streaming.visiting.agent_loading import load_agent
from django_agent_sessions.streaming.visiting.context import AgentRunContext, run_context
from django_agent_sessions.streaming.working.host import run_host
from django_agent_sessions.streaming.working.requests import SCOPE_TYPE


async def start_run(
    session_id: str | None,
    input: str,
    *,
    agent: Agent[Any] | str | None = None,
    owner: Any = None,
    context: Any = None,
    origin: str = store_orders.CODE,
) -> str:
    """Record and start (or enqueue) a run answering ``input`` in conversation
    ``session_id`` (None: a new one), owned by ``owner``; its run id.

    ``agent``: an ``agents.Agent`` (inline only), a dotted path to one or to a factory,
    or None for ``AGENT_SESSIONS["AGENT"]``. ``context``: what its tools receive as
    ``ctx.context`` (JSON when runs are tasks); None for the default context, with
    ``RUN_CONTEXT`` applied. Raises ``RunRefused`` (``busy``, ``rate_limited``,
    ``quota_exceeded``, ``unavailable``), ``SessionOwnershipError`` for a conversation
    of someone else, ``TypeError`` / ``ValueError`` for arguments it cannot use.
    """
    offloaded = dispatch.offloaded()
    _check_arguments(input, agent, context, offloaded=offloaded)
    session_id = session_id or uuid.uuid4().hex
    DjangoSession(session_id)  # validates the id
    user = owner if owner is not None else AnonymousUser()
    scope = {"type": SCOPE_TYPE, "user": user, "session_id": session_id, "origin": origin}
    loaded = agent if isinstance(agent, Agent) else await load_agent(scope, agent)
    await _within_limits(owner, loaded, offloaded=offloaded)
    order = store_orders.Order(
        origin,
        {"text": input, "parts": [], "files": [], "client_id": ""},
        agent=agent if isinstance(agent, str) else "",
        context=context,
        detached=True,
        claimed=0 if offloaded else 1,
    )
    lease = dispatch.queue_seconds() if offloaded else float(app_settings.RUN_LEASE_SECONDS)
    opened, started = await first_messages.open_and_start(
        session_id,
        owner_id=getattr(owner, "pk", None),
        agent_name=loaded.name,
        lease_seconds=lease,
        order=order,
    )
    if started is None:
        raise RunRefused("busy", _("This conversation has a run already."))
    layer = stream_layer()
    if offloaded:
        placed = await dispatch.place(
            opened.pk,
            order,
            agent_name=loaded.name,
            channel_layer=layer,
            user=user,
            started=started,
        )
        return placed or started.run_id
    request = _request(opened.pk, session_id, input, loaded, owner, user, context, scope)
    await run_task.start(request, channel_layer=layer, started=started)
    return started.run_id


def start_run_sync(session_id: str | None, input: str, **options: Any) -> str:
    """``start_run`` from sync code (a view, a command, a Celery task); the run itself
    goes on in this process's run host, or in a task worker."""
    return run_host().call(start_run(session_id, input, **options))


def _check_arguments(input: Any, agent: Any, context: Any, *, offloaded: bool) -> None:
    if not isinstance(input, str) or not input.strip():
        raise ValueError("start_run needs the text the run answers (a non-empty str).")
    if offloaded and isinstance(agent, Agent):
        raise TypeError(
            'With AGENT_SESSIONS["RUNS"] = "tasks", start_run takes the agent as a dotted '
            "path (to an Agent or a factory) that a task worker can import, not an Agent."
        )
    if offloaded and context is not None:
        try:
            json.dumps(context)
        except (TypeError, ValueError) as error:
            raise TypeError(
                'With AGENT_SESSIONS["RUNS"] = "tasks", a run\'s context crosses to a task '
                f"worker as JSON: {error}"
            ) from None


async def _within_limits(owner: Any, agent: Agent[Any], *, offloaded: bool) -> None:
    """Draining (inline), the owner's rate limit and token budgets, as for a message."""
    if not offloaded and drain.draining():
        raise RunRefused("unavailable", _("The server is restarting; try again in a moment."))
    if owner is None:
        return
    retry_after = await ratelimit.retry_after(f"user:{owner.pk}")
    if retry_after is not None:
        message = _("Too many messages; wait a moment.")
        raise RunRefused("rate_limited", message, retry_after=retry_after)
    standing = await quotas.standing(owner, spending.model_name(agent))
    if standing.exceeded:
        message = _("The token budget is spent.")
        raise RunRefused("quota_exceeded", message, resets_at=standing.resets_at)


def _request(
    conversation_pk: int,
    session_id: str,
    text: str,
    agent: Agent[Any],
    owner: Any,
    user: Any,
    context: Any,
    scope: dict[str, Any],
) -> RunRequest:
    session = DjangoSession(session_id, owner=owner)
    if context is None:
        context = run_context(AgentRunContext(user, session_id, session, scope))
    return RunRequest(
        agent=agent,
        text=text,
        session=session,
        context=context,
        conversation_pk=conversation_pk,
        session_id=session_id,
        user=user,
        detached=True,
    )
