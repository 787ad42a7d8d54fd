"""Scheduled runs' rows: what is due, the claim of one firing, and its outcome.

**A firing is claimed once.** Every scheduler (the command's loop in several processes,
a task that a periodic mechanism enqueues more than once) reads the due schedules, then
claims each with one compare-and-set ``UPDATE``: it moves ``next_fire_at`` on only if it
still holds the value the scheduler read (and the schedule is still enabled). One
claimant's ``UPDATE`` matches the row; any other's matches none, and that claimant does
nothing. The winner starts the run after its transaction committed, and records the
outcome (``record``) in a write of its own: a run may take long, and holds no lock here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import router, transaction

from django_agent_sessions.schedules.models import ScheduledRun

# Most schedules one pass reads; a pass that filled it leaves the rest for the next one.
DUE_BATCH = 100
# last_error keeps the start of long messages (a traceback's last line is what helps).
ERROR_CHARS = 2000


def due(now: datetime, *, limit: int = DUE_BATCH) -> list[ScheduledRun]:
    """Enabled schedules whose next firing is at or before ``now``, the most overdue
    first, with their conversation and owner (what starting their run needs)."""
    return list(
        ScheduledRun.objects.filter(enabled=True, next_fire_at__lte=now)
        .select_related("session", "owner")
        .order_by("next_fire_at", "pk")[:limit]
    )


def next_due_at() -> datetime | None:
    """The earliest next firing of the enabled schedules (the ``agent_schedule_due``
    index answers it), for a scheduler to sleep until; None when nothing is scheduled."""
    found: datetime | None = (
        ScheduledRun.objects.filter(enabled=True, next_fire_at__isnull=False)
        .order_by("next_fire_at")
        .values_list("next_fire_at", flat=True)
        .first()
    )
    return found


def claim(
    pk: int,
    *,
    expected: datetime,
    next_fire_at: datetime,
    fired_at: datetime | None,
    note: str = "",
) -> bool:
    """Move the schedule's next firing from ``expected`` to ``next_fire_at``; True for the
    one caller whose ``UPDATE`` found ``expected`` (it owns the firing), False for every
    other. ``fired_at``: the firing's time, None for a missed firing that is skipped (its
    ``note`` goes to ``last_error``, so the admin shows why nothing ran)."""
    fields: dict[str, Any] = {"next_fire_at": next_fire_at}
    if fired_at is not None:
        fields["last_fired_at"] = fired_at
    if note:
        fields["last_error"] = note[:ERROR_CHARS]
    using = router.db_for_write(ScheduledRun)
    with transaction.atomic(using=using):
        claimed: int = (
            ScheduledRun.objects.using(using)
            .filter(pk=pk, next_fire_at=expected, enabled=True)
            .update(**fields)
        )
    return claimed == 1


def record(pk: int, *, run_id: str = "", error: str = "") -> None:
    """A claimed firing's outcome: the run it started (``last_error`` cleared), or why
    none started (the last run started stays named)."""
    fields: dict[str, Any] = {"last_error": error[:ERROR_CHARS]}
    if run_id:
        fields["last_run_id"] = run_id
    ScheduledRun.objects.using(router.db_for_write(ScheduledRun)).filter(pk=pk).update(**fields)


def fire_soon(pks: list[int], now: datetime) -> int:
    """The admin's "fire now": the enabled schedules among ``pks`` are due at ``now``, so
    the schedulers' next pass fires each of them once (through the same claim); an
    interval schedule's series goes on from ``now``. How many were enabled."""
    using = router.db_for_write(ScheduledRun)
    changed: int = (
        ScheduledRun.objects.using(using).filter(pk__in=pks, enabled=True).update(next_fire_at=now)
    )
    return changed
