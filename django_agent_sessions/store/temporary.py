"""Temporary chats: the pages open on one, and removing one with all it wrote.

A temporary chat's row counts the pages open on it (``open_pages``, across every worker:
the database is the one place they all see) and keeps when the last one closed
(``left_at``). It is removed, with everything it wrote, by the same deletion as
retention's (``store.removal``: items in one statement, attachments with their files
once the transaction commits, runs, approvals, orders, usage shares, ratings, schedules
through the collector, and the search index's rows with the items):

- ``remove_if_left``: its last page closed ``grace`` seconds ago, none opened it again,
  and no run holds it (a run kept going after the tab left ends first; the TTL then
  takes the chat);
- ``expire``: the sweep's; past ``TEMPORARY_TTL`` since its last activity, or left by
  its last page longer than the grace ago (a worker that stopped before its timer).

Each re-checks its condition on the locked rows, so a page that comes back between the
question and the lock keeps the chat. Before a chat goes, its runs' tokens are kept as
totals when budgets need them (``store.usage_totals``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import router, transaction
from django.db.models import Case, Exists, F, OuterRef, Q, When
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import removal, usage_totals
from django_agent_sessions.store.hops import hop
from django_agent_sessions.temporary import settings


def _database() -> str:
    return router.db_for_write(AgentSession)


@hop(write=True)
def page_opened(conversation_pk: int) -> bool:
    """A page follows this conversation: one more open page; whether it counted (a
    no-op unless it is a temporary chat)."""
    rows = AgentSession.objects.using(_database()).filter(pk=conversation_pk, temporary=True)
    counted: int = rows.update(open_pages=F("open_pages") + 1, left_at=None)
    return counted > 0


@hop(write=True)
def page_closed(conversation_pk: int) -> int | None:
    """A page stopped following it: one fewer (never below zero), and when; how many
    are left (None: not a temporary chat, or gone)."""
    using = _database()
    rows = AgentSession.objects.using(using).filter(pk=conversation_pk, temporary=True)
    with transaction.atomic(using=using):
        fewer = Case(When(open_pages__gt=0, then=F("open_pages") - 1), default=0)
        if not rows.update(open_pages=fewer, left_at=timezone.now()):
            return None
        left: int | None = rows.values_list("open_pages", flat=True).first()
        return left


def _left(grace: float, now: datetime) -> Q:
    """Its last page closed more than ``grace`` seconds ago, and none is open."""
    return Q(open_pages=0, left_at__lte=now - timedelta(seconds=grace))


def _unheld(now: datetime) -> Q:
    holding = AgentRun.objects.holding(now).filter(session_id=OuterRef("pk"))
    return ~Q(Exists(holding))


@hop(write=True)
def remove_if_left(conversation_pk: int, grace: float, *, now: datetime | None = None) -> bool:
    """Remove the temporary chat if its pages are gone (see the module); whether it did."""
    now = now or timezone.now()
    condition = _left(grace, now) & _unheld(now)
    return _remove(_database(), [conversation_pk], condition) > 0


def expire(
    ttl: timedelta,
    grace: float,
    *,
    now: datetime | None = None,
    batch_size: int = removal.DEFAULT_BATCH_SIZE,
) -> int:
    """Remove the temporary chats past ``ttl`` since their last activity, or left by
    their pages (see the module), in batches of one short transaction each; how many."""
    now, using = now or timezone.now(), _database()
    condition = Q(updated_at__lt=now - ttl) | (_left(grace, now) & _unheld(now))
    due = AgentSession.objects.using(using).filter(condition, temporary=True)
    removed = last = 0
    while True:
        # Keyset: one that came back under the lock (a page opened it) is not asked again.
        batch = list(
            due.filter(pk__gt=last).order_by("pk").values_list("pk", flat=True)[:batch_size]
        )
        if not batch:
            return removed
        last = batch[-1]
        removed += _remove(using, batch, condition)


def sweep(*, now: datetime | None = None) -> int:
    """``expire`` with the settings' ``TEMPORARY_TTL`` and grace: the sweep's."""
    return expire(settings.ttl(), settings.grace_seconds(), now=now)


asweep = hop(write=True)(sweep)


def _remove(using: str, pks: list[int], condition: Q) -> int:
    """Lock these conversations, then remove the temporary ones that still meet
    ``condition``: how many."""
    with transaction.atomic(using=using):
        locked = removal.lock(using, pks)
        rows = AgentSession.objects.using(using).filter(condition, pk__in=locked, temporary=True)
        due = list(rows.values_list("pk", flat=True))
        if not due:
            return 0
        usage_totals.keep_totals_of(using, due)
        return removal.delete_locked(using, due).conversations


def is_temporary(session_id: str) -> bool:
    """Whether this conversation is a temporary chat (False when it does not exist)."""
    found: bool = AgentSession.objects.filter(session_id=session_id, temporary=True).exists()
    return found
