"""A visitor's queued messages (``WHILE_RUNNING = "queue"``): a message sent during a
reply is kept (``store.queued``) instead of refused ``busy``; ``queue_edit`` and
``queue_remove`` change it until it is sent (``queue_sending``). Every change is told to
the conversation's tabs as ``conversation.queue``, the whole queue: a tab replaces what
it shows, whatever it missed.

Only the message's owner (the conversation's owner who queued it) edits or removes it;
for anyone else it does not exist (``unknown_queued``), as a conversation of someone
else does not.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from django.utils.translation import gettext as _

from django_agent_sessions.store import holding, queued
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.streaming.visiting import admission, queue_sending
from django_agent_sessions.streaming.wire import frames, queue_frames


class Queuer(Protocol):
    """What queueing needs of a visitor (``actions.Participant`` has it)."""

    channel_layer: Any
    conversation_pk: int | None
    anonymous: bool

    @property
    def user(self) -> Any: ...

    def rate_limit_key(self) -> str: ...


def _owner_id(visitor: Queuer) -> Any:
    return None if visitor.anonymous else visitor.user.pk


async def queued_during_reply(visitor: Queuer, frame: frames.UserMessage) -> bool:
    """Queue ``frame`` if a run holds the conversation; False (nothing done) if none
    does: it is sent as usual. A message with files is not queued (``busy``): its files
    would be shown before it was sent."""
    session_pk = visitor.conversation_pk
    assert session_pk is not None
    idle = active_runs.local_run(session_pk) is None and not await holding.held(session_pk)
    # Idle with messages left waiting (their end's process died, or could not host the
    # run): this one goes behind them, and they are sent, in order.
    if idle and not await queued.listing(session_pk):
        return False
    if frame.files:
        raise frames.busy(frame.client_id)
    await admission.within_rate(visitor.rate_limit_key(), frame.client_id)  # queueing writes
    waiting = await queued.keep(session_pk, _owner_id(visitor), frame.text, frame.client_id)
    if waiting is None:
        message = _("Too many messages are waiting; wait for the reply.")
        raise frames.BadFrame("queue_full", message, frame.client_id)
    await queue_sending.announce(visitor.channel_layer, session_pk, waiting)
    # The reply may have ended between the look above and the write: then nobody else
    # sends it (its end found nothing queued), so this does. Sent once either way.
    if not await holding.held(session_pk):
        await queue_sending.send_next(visitor.channel_layer, session_pk)
    return True


async def edit(visitor: Queuer, content: dict[str, Any]) -> None:
    """A ``queue_edit``: replace a queued message's text."""
    frame = queue_frames.queue_edit(content)
    await _change(visitor, functools.partial(queued.edit, pk=frame.pk, text=frame.text))


async def remove(visitor: Queuer, content: dict[str, Any]) -> None:
    """A ``queue_remove``: the queued message is not sent."""
    await _change(visitor, functools.partial(queued.remove, pk=queue_frames.queued_id(content)))


Change = Callable[[int, Any], Awaitable["list[queued.Queued] | None"]]


async def _change(visitor: Queuer, change: Change) -> None:
    """Make ``change`` (given the conversation and the visitor's id) to the visitor's own
    queued message, then tell every tab the queue."""
    session_pk = visitor.conversation_pk
    waiting = None if session_pk is None else await change(session_pk, _owner_id(visitor))
    if waiting is None:  # sent already, removed, or not theirs
        message = _("This message is not queued any more.")
        raise frames.BadFrame("unknown_queued", message)
    assert session_pk is not None
    await queue_sending.announce(visitor.channel_layer, session_pk, waiting)
