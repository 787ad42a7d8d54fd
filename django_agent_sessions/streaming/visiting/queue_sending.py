"""Sending a conversation's next queued message (``WHILE_RUNNING = "queue"``) once
nothing holds the conversation.

Called when a run's end is recorded (the ``run_finished`` signal, which every recorded
end fires once, wherever it was recorded: the run's web worker, a task worker, or the
sweep that ended a lost run on another worker), and after a message is queued (the reply
may have ended meanwhile). The message is sent as an ordinary run: the one-run-per-
conversation rule and the owner's token budget apply. ``store.queued.Taking`` deletes it
in the transaction that records its run, so it is sent once, however many callers try.

The agent is ``AGENT_SESSIONS["AGENT"]`` and the context the default one (with
``RUN_CONTEXT``), as for a run started from code: the tab that queued the message may
be gone. A message refused at sending (a spent budget, an agent that cannot load) is
removed from the queue and its text told to the conversation's tabs
(``conversation.queue``'s ``refused``), so the page can put it back in the composer.

With ``RUNS = "inline"`` the run starts in the process that recorded the end; one that
must not host runs (a worker that drains, the sweep command: ``hosting_no_runs``) sends
nothing, and the message stays queued. So does one whose process died between the end
and the send. Such a message is sent later: at the conversation's next run's end, at its
next message (queued behind it), or when a tab opens it (``kick``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Iterator
from typing import Any

from agents import Agent
from django.contrib.auth.models import AnonymousUser
from django.utils.translation import gettext as _

from django_agent_sessions.budgets import quotas
from django_agent_sessions.conf import app_settings
from django_agent_sessions.layers import stream_layer
from django_agent_sessions.session import DjangoSession
from django_agent_sessions.store import holding, queued
from django_agent_sessions.store import orders as store_orders
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.delivery.groups import group_name
from django_agent_sessions.streaming.running import dispatch, drain, run_task, spending
from django_agent_sessions.streaming.running.active_runs import RunRequest
from django_agent_sessions.streaming.visiting import while_running
from django_agent_sessions.streaming.visiting.agent_loading import load_agent
from django_agent_sessions.streaming.visiting.context import AgentRunContext, run_context

logger = logging.getLogger(__name__)

# What a factory sees for any run away from a tab (``working.requests.SCOPE_TYPE``).
SCOPE_TYPE = "agent_sessions.task"
_hosting: contextvars.ContextVar[bool] = contextvars.ContextVar("hosting", default=True)
_kicks: set[asyncio.Task[None]] = set()  # kept until done (the loop keeps weak references)


def hosts_runs() -> bool:
    """Whether this context may start a queued message's run (see the module)."""
    return _hosting.get()


@contextlib.contextmanager
def hosting_no_runs() -> Iterator[None]:
    """Within it, this context starts no runs (the sweep command): see the module.
    Reset on the way out: ``async_to_sync`` copies an async caller's context back to
    the thread that called it, so a flag merely set would outlive the command in that
    thread (``call_command`` from a long-lived process) and stop its queues for good."""
    token = _hosting.set(False)
    try:
        yield
    finally:
        _hosting.reset(token)


def kick(session_pk: int) -> None:
    """Send the conversation's next queued message in the background, if nothing holds
    it (a tab opened a conversation whose queue was left waiting)."""
    loop = asyncio.get_running_loop()
    # In a context of its own: it outlives the socket or request that started it.
    task = contextvars.Context().run(loop.create_task, after_end(session_pk))
    _kicks.add(task)
    task.add_done_callback(_kicks.discard)


async def announce(
    channel_layer: Any,
    session_pk: int,
    waiting: list[queued.Queued],
    refused: dict[str, Any] | None = None,
) -> None:
    """Tell the conversation's tabs its queue as it is now (and a refused message)."""
    event: dict[str, Any] = {
        "type": "conversation.queue",
        "queued": [message.wire() for message in waiting],
    }
    if refused is not None:
        event["refused"] = refused
    await fanout.broadcast(channel_layer, group_name(session_pk), session_pk, event)


async def after_end(session_pk: int, channel_layer: Any = None) -> None:
    """A run of the conversation ended: send its next queued message, if any. Never
    raises: the end it follows is recorded and told already. Every recorded end calls it
    (``run_finished``): outside queue mode it returns before anything else, the stream
    layer (``channel_layer`` by default) included."""
    if not while_running.queues():
        return
    try:
        await send_next(channel_layer or stream_layer(), session_pk)
    except Exception:
        logger.exception("Could not send the next queued message of conversation %s.", session_pk)


async def send_next(channel_layer: Any, session_pk: int) -> str | None:
    """Start the conversation's next queued message as a run; its run id, or None
    (nothing queued, a run holds the conversation, or another caller sent it). A
    refused message is dropped (and told), and the next one tried."""
    if not dispatch.offloaded() and (drain.draining() or not hosts_runs()):
        return None  # it would start here, which must not host it (see the module)
    while True:
        taken = await queued.next_message(session_pk)
        if taken is None or await holding.held(session_pk):
            return None
        refused = await _refusal(taken)
        if refused is None:
            return await _send(channel_layer, session_pk, taken)
        await _refuse(channel_layer, session_pk, taken.message, refused)


async def _refusal(taken: queued.Next) -> str | None:
    """Why the message cannot be sent now (an error code), or None."""
    owner = taken.owner
    user = owner if owner is not None else AnonymousUser()
    try:
        agent = await load_agent(_scope(taken, user))
        standing = await quotas.standing(owner, spending.model_name(agent)) if owner else None
    except Exception:
        logger.exception("Could not load the agent for a queued message.")
        return "unavailable"
    return "quota_exceeded" if standing is not None and standing.exceeded else None


def _scope(taken: queued.Next, user: Any) -> dict[str, Any]:
    return {"type": SCOPE_TYPE, "user": user, "session_id": taken.session_id, "origin": "queue"}


async def _send(channel_layer: Any, session_pk: int, taken: queued.Next) -> str | None:
    owner, message = taken.owner, taken.message
    user = owner if owner is not None else AnonymousUser()
    scope = _scope(taken, user)
    agent = await load_agent(scope)  # loaded a moment ago by ``_refusal``
    offloaded = dispatch.offloaded()
    order = store_orders.Order(
        store_orders.TAB,
        {"text": message.text, "parts": [], "files": [], "client_id": message.client_id},
        detached=True,
    )
    lease = dispatch.queue_seconds() if offloaded else float(app_settings.RUN_LEASE_SECONDS)
    started = await store_runs.start(
        session_pk,
        agent_name=agent.name,
        lease_seconds=lease,
        client_id=message.client_id,
        order=queued.Taking(message.pk, order if offloaded else None),
    )
    if started is None:
        return None  # a run holds it again, or the message was sent or removed
    await announce(channel_layer, session_pk, await queued.listing(session_pk))
    if offloaded:
        return await dispatch.place(
            session_pk,
            order,
            agent_name=agent.name,
            channel_layer=channel_layer,
            user=user,
            started=started,
        )
    request = _request(session_pk, taken, agent, user, scope)
    await run_task.start(request, channel_layer=channel_layer, started=started)
    return started.run_id


def _request(
    session_pk: int, taken: queued.Next, agent: Agent[Any], user: Any, scope: dict[str, Any]
) -> RunRequest:
    session = DjangoSession(taken.session_id, owner=taken.owner)
    context = run_context(AgentRunContext(user, taken.session_id, session, scope))
    return RunRequest(
        agent=agent,
        text=taken.message.text,
        session=session,
        context=context,
        conversation_pk=session_pk,
        session_id=taken.session_id,
        user=user,
        client_id=taken.message.client_id,
        detached=True,  # it goes on when the last tab leaves: nobody is waiting on a tab
    )


async def _refuse(channel_layer: Any, session_pk: int, message: queued.Queued, code: str) -> None:
    """Drop a message that cannot be sent, and tell the tabs its text (not silently)."""
    if not await queued.drop(message.pk):
        return  # removed meanwhile: nothing to tell
    text = {
        "quota_exceeded": _("Your queued message was not sent: the token budget is spent."),
        "unavailable": _("Your queued message was not sent: the assistant is not available."),
    }[code]
    refused = {"text": message.text, "client_id": message.client_id, "code": code, "message": text}
    await announce(channel_layer, session_pk, await queued.listing(session_pk), refused)
