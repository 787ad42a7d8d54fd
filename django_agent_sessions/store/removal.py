"""Removing stored conversations in transactions: clearing, deleting and pruning by age.

None of these functions loads items: the conversation rows are locked first
(``conversations.lock_conversations``) and items are deleted with one statement, and only
the conversation rows are left for the ORM, so a concurrent ``DjangoSession`` write waits
instead of interleaving. ``django_agent_sessions.retention`` is their public face.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connections, router, transaction
from django.db.models import Sum
from django.utils import timezone

from django_agent_sessions.models import AgentSession
from django_agent_sessions.store.conversations import delete_items_of, lock_conversations

DEFAULT_BATCH_SIZE = 500


@dataclass(frozen=True)
class Removed:
    """How many conversations and items an operation removed (or would remove)."""

    conversations: int
    items: int


def clear_conversations(session_pks: Sequence[int], *, using: str | None = None) -> Removed:
    """Delete the items of these conversations; the rows (owner, title) stay."""
    using = using or router.db_for_write(AgentSession)
    count = items = 0
    now = timezone.now()
    with transaction.atomic(using=using):
        for pks in _chunks(session_pks):
            cleared = AgentSession.objects.using(using).filter(pk__in=pks)
            count += cleared.update(item_count=0, updated_at=now)
            items += delete_items_of(connections[using], pks)
    return Removed(conversations=count, items=items)


def delete_conversations(session_pks: Sequence[int], *, using: str | None = None) -> Removed:
    """Delete these conversations and their items without loading any item."""
    using = using or router.db_for_write(AgentSession)
    conversations = items = 0
    with transaction.atomic(using=using):
        for pks in _chunks(session_pks):
            removed = _delete_locked(using, _lock(using, pks, before=None))
            conversations += removed.conversations
            items += removed.items
    return Removed(conversations=conversations, items=items)


def prune(
    older_than: timedelta,
    *,
    dry_run: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    using: str | None = None,
    now: datetime | None = None,
) -> Removed:
    """Delete conversations with no activity during the last ``older_than``.

    Works in batches of ``batch_size`` conversations, one short transaction each, so
    a large prune never holds locks for long. A conversation that gets new activity
    while the prune runs is kept: each batch re-checks the age under the row lock.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    using = using or router.db_for_write(AgentSession)
    cutoff = (now or timezone.now()) - older_than
    stale = AgentSession.objects.using(using).filter(updated_at__lt=cutoff)
    if dry_run:
        totals = stale.aggregate(items=Sum("item_count"))
        return Removed(conversations=stale.count(), items=totals["items"] or 0)
    conversations = items = 0
    while True:
        batch = list(stale.order_by("updated_at", "pk").values_list("pk", flat=True)[:batch_size])
        if not batch:
            return Removed(conversations=conversations, items=items)
        with transaction.atomic(using=using):
            removed = _delete_locked(using, _lock(using, batch, before=cutoff))
        conversations += removed.conversations
        items += removed.items


def _chunks(session_pks: Sequence[int]) -> list[list[int]]:
    """Bounded IN lists: SQLite caps the number of query parameters."""
    pks = list(session_pks)
    size = DEFAULT_BATCH_SIZE
    return [pks[start : start + size] for start in range(0, len(pks), size)]


def lock(using: str, session_pks: Sequence[int], *, before: datetime | None = None) -> list[int]:
    """Write-lock these conversation rows in the caller's transaction; the locked pks."""
    return _lock(using, session_pks, before=before)


def _lock(using: str, session_pks: Sequence[int], *, before: datetime | None) -> list[int]:
    return lock_conversations(connections[using], session_pks, before=before)


def delete_locked(using: str, pks: list[int]) -> Removed:
    """Delete these conversations, already locked by the caller's transaction (in
    ``transaction.atomic``, for their files to go once it commits)."""
    return _delete_locked(using, pks)


def _delete_locked(using: str, pks: list[int]) -> Removed:
    if not pks:
        return Removed(conversations=0, items=0)
    items = delete_items_of(connections[using], pks)
    # The collector now finds no items; it still handles any other model that points
    # at conversations.
    _, per_model = AgentSession.objects.using(using).filter(pk__in=pks).delete()
    return Removed(conversations=per_model.get(AgentSession._meta.label, 0), items=items)
