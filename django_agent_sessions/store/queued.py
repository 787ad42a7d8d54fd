"""Queued messages (``WHILE_RUNNING = "queue"``): keeping, listing, editing, removing,
and taking the next one with the run that answers it.

Each action is one transaction. ``Taking`` deletes the message in the transaction that
records its run (``runs.start`` writes it with the run, as it writes a task's order):
either both are committed or neither is, so a message is sent exactly once, however many
workers see the reply's end at once (the run's worker, the sweep on another, a task
worker): all but one find the conversation held, or the row gone, and write nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from django_agent_sessions import serialization
from django_agent_sessions.models import AgentSession, QueuedMessage
from django_agent_sessions.store import runs
from django_agent_sessions.store.hops import hop

#: How many messages one conversation may hold queued; one more is refused.
MAX_QUEUED = 20


@dataclass(frozen=True)
class Queued:
    """A queued message, as the wire shows it (``wire()``) and as it is sent."""

    pk: int
    text: str
    client_id: str
    created_at: str

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "text": self.text,
            "client_id": self.client_id,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class Next:
    """The conversation's next queued message, and what sending it needs."""

    message: Queued
    session_id: str
    owner: Any  # the conversation's owner (a user), or None


def _queued(row: QueuedMessage) -> Queued:
    return Queued(row.pk, row.text, row.client_id, row.created_at.isoformat())


def _listing(session_pk: int, using: str) -> list[Queued]:
    rows = QueuedMessage.objects.using(using).filter(session_id=session_pk).order_by("id")
    return [_queued(row) for row in rows]


@hop
def listing(session_pk: int) -> list[Queued]:
    """The conversation's queued messages, oldest (sent first) first."""
    return _listing(session_pk, runs.database())


@hop(write=True)
def keep(session_pk: int, owner_id: Any, text: str, client_id: str) -> list[Queued] | None:
    """Queue ``text`` last; the queue after, or None if it holds ``MAX_QUEUED`` already."""
    using = runs.database()
    with transaction.atomic(using=using):
        runs.lock_conversation(session_pk, using)  # concurrent sends keep their order
        if QueuedMessage.objects.using(using).filter(session_id=session_pk).count() >= MAX_QUEUED:
            return None
        QueuedMessage.objects.using(using).create(
            session_id=session_pk,
            owner_id=owner_id,
            text=text,
            client_id=serialization.column_text(client_id, 64),
        )
        return _listing(session_pk, using)


@hop(write=True)
def edit(session_pk: int, owner_id: Any, pk: int, text: str) -> list[Queued] | None:
    """Replace the text of queued message ``pk`` of ``owner_id`` in this conversation;
    the queue after, or None if there is no such message (sent already, or not theirs)."""
    using = runs.database()
    with transaction.atomic(using=using):
        found = QueuedMessage.objects.using(using).filter(
            pk=pk, session_id=session_pk, owner_id=owner_id
        )
        if not found.update(text=text):
            return None
        return _listing(session_pk, using)


@hop(write=True)
def remove(session_pk: int, owner_id: Any, pk: int) -> list[Queued] | None:
    """Remove queued message ``pk`` of ``owner_id``; the queue after, or None (as ``edit``)."""
    using = runs.database()
    with transaction.atomic(using=using):
        found = QueuedMessage.objects.using(using).filter(
            pk=pk, session_id=session_pk, owner_id=owner_id
        )
        deleted, _counts = found.delete()
        if not deleted:
            return None
        return _listing(session_pk, using)


@hop
def next_message(session_pk: int) -> Next | None:
    """The conversation's first queued message (not taken: ``Taking`` does), or None."""
    using = runs.database()
    row = QueuedMessage.objects.using(using).filter(session_id=session_pk).order_by("id").first()
    if row is None:
        return None
    conversation = AgentSession.objects.using(using).select_related("owner").get(pk=session_pk)
    return Next(_queued(row), conversation.session_id, conversation.owner)


@hop(write=True)
def drop(pk: int) -> bool:
    """Delete a queued message that cannot be sent (refused); False if it was gone."""
    deleted, _counts = QueuedMessage.objects.using(runs.database()).filter(pk=pk).delete()
    return bool(deleted)


@dataclass(frozen=True)
class Taking:
    """Written with a new run (``runs.start``'s ``order``): deletes queued message ``pk``
    in the run's transaction, and writes the run's task ``order`` if it has one. A message
    gone meanwhile (removed, or taken by another worker) raises ``IntegrityError``, which
    ``runs.start`` answers by recording no run."""

    pk: int
    order: runs.Writable | None = None

    def write(self, run_pk: int, using: str) -> None:
        deleted, _counts = QueuedMessage.objects.using(using).filter(pk=self.pk).delete()
        if not deleted:
            raise IntegrityError("The queued message was taken or removed.")
        if self.order is not None:
            self.order.write(run_pk, using)
