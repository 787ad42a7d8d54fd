"""A conversation's stored history as one socket gets it: the ``history`` frame on
connect (with the run in flight, and the calls waiting for a decision) and the
``history.page`` frames of ``load_older``, each within ``HISTORY_LIMIT`` items and
``HISTORY_MAX_BYTES``. Reads only, one hop each.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from django_agent_sessions.conf import app_settings
from django_agent_sessions.store import conversations, pending, queued
from django_agent_sessions.store.conversations import History
from django_agent_sessions.store.pending import PendingApproval
from django_agent_sessions.streaming.visiting import queue_sending, while_running
from django_agent_sessions.streaming.wire import encoding

Send = Callable[[Any], Awaitable[None]]
_EMPTY = {"items": [], "has_more": False, "oldest_id": None}


async def load(
    conversation_pk: int, *, up_to_item_id: int | None, before_id: int | None = None
) -> History:
    return await conversations.aread_history(
        conversation_pk,
        up_to_item_id=up_to_item_id,
        limit=app_settings.HISTORY_LIMIT,
        max_chars=app_settings.HISTORY_MAX_BYTES,
        before_id=before_id,
    )


async def send_frame(
    send: Send, conversation_pk: int, history: History, active_run: Any
) -> list[PendingApproval]:
    """Send the ``history`` frame; the calls waiting for a decision it lists."""
    waiting_calls = await pending.pending(conversation_pk)
    # Read in "queue" mode only: no other mode queues, so no query for an empty list.
    waiting = await queued.listing(conversation_pk) if while_running.queues() else []
    await send(
        encoding.history_frame(
            encoding.history_fields(history, app_settings.HISTORY_MAX_BYTES),
            last_item_id=history.entries[-1].id if history.entries else None,
            active_run=active_run,
            pending_approvals=[call.wire() for call in waiting_calls],
            queued=[message.wire() for message in waiting],
        )
    )
    if waiting and active_run is None and not waiting_calls:
        queue_sending.kick(conversation_pk)  # left waiting: nothing runs to send it after
    return waiting_calls


async def send_empty_frame(send: Send) -> None:
    """The history frame of a conversation that does not exist yet."""
    await send(
        encoding.history_frame(_EMPTY, last_item_id=None, active_run=None, pending_approvals=[])
    )


async def send_page(send: Send, conversation_pk: int | None, before: int) -> None:
    """A ``history.page`` of the items older than the item id ``before``."""
    if conversation_pk is None:  # not created yet: nothing is older
        await send({"type": "history.page", "before": before, **_EMPTY})
        return
    history = await load(conversation_pk, up_to_item_id=None, before_id=before)
    fields = encoding.history_fields(history, app_settings.HISTORY_MAX_BYTES)
    await send({"type": "history.page", "before": before, **fields})


async def run_progress(conversation_pk: int, run_id: str) -> tuple[str, int] | None:
    """A run's status and the seq of its last recorded event (see ``pending.progress``)."""
    return await pending.progress(conversation_pk, run_id)
