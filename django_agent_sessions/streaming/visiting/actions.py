"""What a visitor's client frames do, whichever transport carried them.

The websocket consumer and the HTTP stream's POST views both decode a frame, then call
one function here: ``send_from_chat`` (start a run; during a reply, what
``WHILE_RUNNING`` says), ``decide`` (a tool call's approval) or ``cancel``; the protocol
adapters send with ``send_message``. Each raises ``frames.BadFrame`` with the wire's
error code for what the client is told, and lets ``SessionOwnershipError`` through (a
transport refuses the visitor its own way: a close code, a 403).
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Protocol

from agents import Agent
from django.utils.translation import gettext as _

from django_agent_sessions.exceptions import (
    ConversationGone,
    SessionOwnershipError,
    UploadRefused,
)
from django_agent_sessions.session import DjangoSession
from django_agent_sessions.store import orders as store_orders
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.store import uploads
from django_agent_sessions.streaming.running import (
    active_runs,
    arrivals,
    dispatch,
    drain,
    lifecycle,
    run_task,
)
from django_agent_sessions.streaming.running.empty_history import EmptyHistorySession
from django_agent_sessions.streaming.visiting import (
    admission,
    queueing,
    steering,
    while_running,
)
from django_agent_sessions.streaming.wire import frames

logger = logging.getLogger(__name__)


class Participant(Protocol):
    """A visitor in one conversation, as a transport knows them."""

    channel_layer: Any
    conversation_pk: int | None  # None until the conversation exists
    session_id: str  # the stored conversation id
    anonymous: bool

    @property
    def user(self) -> Any: ...

    async def get_agent(self) -> Agent[Any]: ...

    def get_run_context(self, session: DjangoSession) -> Any: ...

    def rate_limit_key(self) -> str: ...

    async def create_conversation(
        self,
        *,
        agent_name: str,
        client_id: str,
        order: store_orders.Order | None = None,
        temporary: bool = False,
    ) -> store_runs.StartedRun | None:
        """Create the conversation (owned by the visitor; a temporary chat if asked or
        forced) with its first run's record (and its ``order``, for a task), set
        ``conversation_pk``; None if it existed already and has a run."""


def _refuse_while_draining(client_id: str = "") -> None:
    """A worker that stops starts nothing: sent again, the frame reaches another one."""
    if drain.draining():
        message = _("The server is restarting; send it again in a moment.")
        raise frames.BadFrame("unavailable", message, client_id, retry_after=1)


async def send_message(visitor: Participant, content: dict[str, Any]) -> None:
    """A ``user_message`` of a protocol adapter: start a run answering it. The adapters'
    clients know no queue and no steering: during a reply it is ``busy`` (or, with
    ``WHILE_RUNNING = "interrupt"``, it stops the reply)."""
    await _send(visitor, content, chat=False)


async def send_from_chat(visitor: Participant, content: dict[str, Any]) -> dict[str, Any] | None:
    """A ``user_message`` of the app's own transports (the websocket, the HTTP stream),
    where every ``WHILE_RUNNING`` mode applies. Returns the sender's own answer
    (``steer.accepted``: it joined the reply), or None."""
    return await _send(visitor, content, chat=True)


async def _send(
    visitor: Participant, content: dict[str, Any], *, chat: bool
) -> dict[str, Any] | None:
    with arrivals.on_its_way(lambda: visitor.conversation_pk):  # titles wait (``titling``)
        return await _admit(visitor, content, chat=chat)


async def _admit(
    visitor: Participant, content: dict[str, Any], *, chat: bool
) -> dict[str, Any] | None:
    frame = frames.user_message(content)
    _refuse_while_draining(frame.client_id)
    mode = while_running.for_message(visitor.conversation_pk, bool(frame.files), chat=chat)
    if visitor.conversation_pk is not None:
        if mode == while_running.BUSY and active_runs.local_run(visitor.conversation_pk):
            raise frames.busy(frame.client_id)
        await lifecycle.expire_overdue(visitor.channel_layer, visitor.conversation_pk, visitor.user)
        if mode == while_running.QUEUE and await queueing.queued_during_reply(visitor, frame):
            return None  # counted by the rate limit there
    # Counted here, where writing begins: connecting writes nothing, so is not counted.
    await admission.within_rate(visitor.rate_limit_key(), frame.client_id)
    if mode == while_running.STEER:
        assert visitor.conversation_pk is not None
        accepted = await steering.enter(visitor.conversation_pk, frame)
        if accepted is not None:
            return accepted  # else no run was live: it starts one
    if mode == while_running.INTERRUPT:  # after the rate limit: a refused message stops nothing
        assert visitor.conversation_pk is not None
        stop = functools.partial(_stop, visitor, None)
        if not await while_running.interrupt(visitor.channel_layer, visitor.conversation_pk, stop):
            raise frames.busy(frame.client_id)
    try:
        # The agent first: a broken factory leaves no empty conversation behind.
        agent = await visitor.get_agent()
        await admission.within_budget(visitor.user, agent, frame.client_id)  # before any model call
        # The files next: one that is not the visitor's leaves nothing behind either.
        attached = await _files(visitor, frame.files)
        started, order = None, _order(frame, attached)
        if visitor.conversation_pk is None:
            started = await visitor.create_conversation(
                agent_name=agent.name,
                client_id=frame.client_id,
                order=order,
                temporary=frame.temporary,
            )
            if started is None:
                raise frames.busy(frame.client_id)
        if order is not None:  # a task runs it (RUNS = "tasks")
            began = await _place(visitor, order, agent, started)
        else:
            began = await _start_here(visitor, frame, agent, attached, started)
    except UploadRefused as refused:  # a file the message names is not the visitor's
        raise frames.BadFrame(refused.code, str(refused), frame.client_id) from None
    except (SessionOwnershipError, frames.BadFrame):
        raise  # someone else created this id since the visitor opened it
    except ConversationGone:  # deleted since the tab opened it (another tab, the admin)
        message = _("This conversation was deleted.")
        raise frames.BadFrame("not_found", message, frame.client_id) from None
    except Exception:
        # A broken agent factory or an unreachable database: the browser learns that
        # nothing started, the details go to the log, and the connection stays usable.
        logger.exception("Could not start an agent run.")
        message = _("The assistant is not available.")
        raise frames.BadFrame("unavailable", message, frame.client_id) from None
    if not began:
        raise frames.busy(frame.client_id)
    return None


Attached = tuple[list[dict[str, Any]], list[uploads.StoredFile]]


def _order(frame: frames.UserMessage, attached: Attached) -> store_orders.Order | None:
    """What a task needs to run the message, when runs are tasks; else None."""
    if not dispatch.offloaded():
        return None
    parts, shown = attached
    message = {"text": frame.text, "parts": parts, "files": [file.wire() for file in shown]}
    return store_orders.Order(store_orders.TAB, {**message, "client_id": frame.client_id})


async def _place(
    visitor: Participant,
    order: store_orders.Order,
    agent: Agent[Any],
    started: store_runs.StartedRun | None,
) -> bool:
    assert visitor.conversation_pk is not None
    run_id = await dispatch.place(
        visitor.conversation_pk,
        order,
        agent_name=agent.name,
        channel_layer=visitor.channel_layer,
        user=visitor.user,
        started=started,
    )
    return run_id is not None


async def _start_here(
    visitor: Participant,
    frame: frames.UserMessage,
    agent: Agent[Any],
    attached: Attached,
    started: store_runs.StartedRun | None,
) -> bool:
    request = await run_request(
        visitor,
        frame.text,
        frame.client_id,
        agent=agent,
        attached=attached,
        # Recorded with no item before it: the history it would read is known.
        empty=started is not None and started.history_item_id == 0,
    )
    active = await run_task.start(request, channel_layer=visitor.channel_layer, started=started)
    return active is not None


async def run_request(
    visitor: Participant,
    text: str,
    client_id: str = "",
    *,
    agent: Agent[Any] | None = None,
    attached: Attached = ([], []),
    empty: bool = False,
) -> active_runs.RunRequest:
    """The run of a message; ``attached``: its files' input parts and how they show;
    ``empty``: the conversation is known to hold nothing yet (``empty_history``)."""
    assert visitor.conversation_pk is not None
    agent = agent or await visitor.get_agent()
    owner = None if visitor.anonymous else visitor.user
    parts, shown = attached
    # A message's files are always stored as files (shown in the chat, after reloads too).
    session_class = EmptyHistorySession if empty else DjangoSession
    session = session_class(visitor.session_id, owner=owner, offload_chars=0 if parts else None)
    return active_runs.RunRequest(
        agent=agent,
        text=text,
        parts=tuple(parts),
        files=tuple(file.wire() for file in shown),
        session=session,
        context=visitor.get_run_context(session),
        conversation_pk=visitor.conversation_pk,
        session_id=visitor.session_id,
        user=visitor.user,
        client_id=client_id,
    )


async def _files(visitor: Participant, files: tuple[int, ...]) -> Attached:
    if not files:
        return [], []
    if visitor.anonymous:  # uploads are for signed-in people only
        raise UploadRefused("unknown_file", _("A file of this message is not here any more."))
    return await uploads.for_message(visitor.session_id, visitor.user.pk, files)


async def decide(visitor: Participant, content: dict[str, Any]) -> None:
    """An ``approval``: a decision on a tool call the conversation's waiting run asks about."""
    frame = frames.approval(content)
    _refuse_while_draining()  # a last decision resumes the run on this worker
    found = False
    try:
        if visitor.conversation_pk is not None:  # else not created yet: nothing waits
            found = await run_task.decide(
                functools.partial(run_request, visitor, ""),
                visitor.conversation_pk,
                frame.call_id,
                approve=frame.approve,
                message=frame.message,
                user=visitor.user,
                user_id=None if visitor.anonymous else visitor.user.pk,
                channel_layer=visitor.channel_layer,
            )
    except Exception:
        logger.exception("Could not record an approval decision.")
        raise frames.BadFrame("unavailable", _("The assistant is not available.")) from None
    if not found:
        message = _("There is no pending approval with this call id.")
        raise frames.BadFrame("unknown_approval", message)


async def cancel(visitor: Participant, content: dict[str, Any]) -> None:
    """A ``cancel``: stop the conversation's run (only ``run_id``, when given)."""
    run_id = frames.cancel(content)
    if visitor.conversation_pk is not None:  # else nothing was ever started here
        await _stop(visitor, run_id)


async def _stop(visitor: Participant, run_id: str | None) -> None:
    """Stop the conversation's run (a ``cancel``, or a message that interrupts it)."""
    assert visitor.conversation_pk is not None
    if dispatch.offloaded() and await dispatch.stop(
        visitor.channel_layer, visitor.conversation_pk, run_id=run_id, user=visitor.user
    ):
        return  # no task had started it: it ended here
    await lifecycle.cancel(
        visitor.channel_layer, visitor.conversation_pk, run_id=run_id, user=visitor.user
    )
