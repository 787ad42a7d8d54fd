"""When a scheduled run fires: an interval (``every``) or a cron expression (``cron``).

No database here: these are functions of a schedule's timing and of ``now``, so that the
claim (``store.schedules``) and the tests compute the same times. Cron expressions are
read by ``croniter`` (the ``schedules`` extra) in the project's ``TIME_ZONE``, the way
people write them ("9 every morning" means 9:00 where the project is, across daylight
saving changes); times are returned aware, as Django stores them.

A firing is *missed* when the scheduler wakes later than ``SCHEDULE_GRACE`` after it (the
schedulers were stopped, or the database was down). What then happens is
``SCHEDULE_MISSED``: ``"skip"`` waits for the next firing in the future, ``"once"``
fires once to catch up. Either way a schedule fires at most once per claim: the firings
that passed while nobody looked are never fired one after the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

MISSED_POLICIES = ("skip", "once")
# Five fields (minute, hour, day of month, month, day of week) or a nickname ("@daily"):
# croniter's sixth field (seconds) would promise a precision no scheduler here keeps.
CRON_FIELDS = 5


@dataclass(frozen=True)
class Plan:
    """What a claim of a due schedule does: fire (or not), and its next firing time."""

    fire: bool
    next_fire_at: datetime
    missed: bool  # the firing was later than the grace


def cron_error(expression: str) -> str | None:
    """Why ``expression`` is not a cron expression this app takes, or None."""
    try:
        from croniter import croniter
    except ImportError:
        return 'cron schedules need croniter: pip install "django-agent-sessions[schedules]"'
    text = expression.strip()
    if not text:
        return "the cron expression is empty"
    if not text.startswith("@") and len(text.split()) != CRON_FIELDS:
        return (
            f"{expression!r} has {len(text.split())} fields; a cron expression has five: "
            "minute, hour, day of month, month, day of week (e.g. '0 9 * * 1-5')"
        )
    if not croniter.is_valid(text):
        return f"{expression!r} is not a valid cron expression (e.g. '*/15 * * * *')"
    return None


def first_firing(*, every: timedelta | None, cron: str, now: datetime) -> datetime:
    """A new (or re-enabled, or re-timed) schedule's first firing: one interval from
    ``now``, or the cron expression's first time after ``now``."""
    if every is not None:
        return now + every
    return _cron_after(cron, now)


def plan(
    *,
    every: timedelta | None,
    cron: str,
    scheduled: datetime,
    now: datetime,
    policy: str,
    grace: timedelta,
) -> Plan:
    """What to do with a schedule due at ``scheduled`` (<= ``now``).

    The firing that counts is the latest one due (``scheduled`` itself, or a later one of
    the series that passed too); it is on time when ``now`` is at most ``grace`` after it.
    An on-time firing fires; a missed one fires only under ``"once"``. The next firing is
    the series' first time after ``now``: never in the past, so one claim, one firing.
    """
    latest = _latest_due(every=every, cron=cron, scheduled=scheduled, now=now)
    missed = now - latest > grace
    fire = not missed or policy == "once"
    return Plan(fire=fire, next_fire_at=_next_after(every, cron, scheduled, now), missed=missed)


def describe(*, every: timedelta | None, cron: str) -> str:
    """The schedule as people read it in the admin: "every 0:15:00" or "cron 0 9 * * *"."""
    return f"every {every}" if every is not None else f"cron {cron}"


def _latest_due(
    *, every: timedelta | None, cron: str, scheduled: datetime, now: datetime
) -> datetime:
    if now <= scheduled:
        return scheduled
    if every is not None:
        return scheduled + every * ((now - scheduled) // every)
    # A time set by hand (the admin) may lie off the cron series: it counts as a firing.
    return max(scheduled, _cron_before(cron, now))


def _next_after(every: timedelta | None, cron: str, scheduled: datetime, now: datetime) -> datetime:
    if every is not None:
        # The series keeps its phase: "every hour" from 9:05 stays at five past.
        return scheduled + every * ((now - scheduled) // every + 1)
    return _cron_after(cron, now)


def _cron_after(cron: str, moment: datetime) -> datetime:
    return _cron(cron, moment, forward=True)


def _cron_before(cron: str, moment: datetime) -> datetime:
    return _cron(cron, moment, forward=False)


def _cron(cron: str, moment: datetime, *, forward: bool) -> datetime:
    from croniter import croniter

    # A fresh iterator for each question: croniter's iterators keep their position.
    series: Any = croniter(cron.strip(), timezone.localtime(moment))
    found: datetime = series.get_next(datetime) if forward else series.get_prev(datetime)
    return found.astimezone(timezone.get_current_timezone())
