"""Firing what is due: each firing of a schedule claimed once, then started as an
ordinary run (``start_run_sync``, origin ``"schedule"``).

``fire_due()`` is one pass, what the ``agent_sessions_schedule`` command does each time
it wakes and what the ``fire_due_schedules`` task does (``scheduler/tasks.py``). Passes
in several processes at once are safe: only the claimant of a firing starts its run
(``store.schedules.claim``). A run that cannot start (the conversation is busy, the
owner's quota is spent, the rate limit) is recorded in the schedule's ``last_error``,
never raised: the schedule has moved on to its next firing already, and the other
schedules of the pass still fire.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.values import parse_duration
from django_agent_sessions.exceptions import RunRefused
from django_agent_sessions.schedules import timing
from django_agent_sessions.schedules.models import ScheduledRun
from django_agent_sessions.store import schedules
from django_agent_sessions.streaming import start_run_sync

logger = logging.getLogger(__name__)

ORIGIN = "schedule"


@dataclass(frozen=True)
class Fired:
    """One firing this process claimed and fired: the run it started, or why none did."""

    schedule_id: int
    name: str
    scheduled_at: datetime
    run_id: str = ""
    error: str = ""


def fire_due(now: datetime | None = None) -> list[Fired]:
    """Claim and fire every schedule due at ``now`` (default: the current time); the
    firings this call fired. A firing another process claimed first is not in it, nor a
    missed one that ``SCHEDULE_MISSED = "skip"`` passes over."""
    now = now or timezone.now()
    policy = app_settings.SCHEDULE_MISSED
    grace = parse_duration(app_settings.SCHEDULE_GRACE)
    fired = []
    for schedule in schedules.due(now):
        scheduled = schedule.next_fire_at
        assert scheduled is not None  # due() reads rows that have one
        plan = timing.plan(
            every=schedule.every,
            cron=schedule.cron,
            scheduled=scheduled,
            now=now,
            policy=policy,
            grace=grace,
        )
        note = "" if plan.fire else f"Missed the firing of {scheduled.isoformat()}: skipped."
        claimed = schedules.claim(
            schedule.pk,
            expected=scheduled,
            next_fire_at=plan.next_fire_at,
            fired_at=now if plan.fire else None,
            note=note,
        )
        if claimed and plan.fire:
            fired.append(_start(schedule, scheduled))
    return fired


def _start(schedule: ScheduledRun, scheduled: datetime) -> Fired:
    try:
        run_id = start_run_sync(
            schedule.session.session_id if schedule.session else None,
            schedule.input,
            agent=schedule.agent or None,
            owner=schedule.owner,
            origin=ORIGIN,
        )
    except RunRefused as refused:
        error = f"{refused.code}: {refused}"
        logger.info("Scheduled run %r (pk=%s) not started: %s", schedule.name, schedule.pk, error)
    except Exception as failure:  # one bad schedule (its agent's path) stops no other
        error = f"{type(failure).__name__}: {failure}"
        logger.exception("Scheduled run %r (pk=%s) failed to start.", schedule.name, schedule.pk)
    else:
        schedules.record(schedule.pk, run_id=run_id)
        return Fired(schedule.pk, schedule.name, scheduled, run_id=run_id)
    schedules.record(schedule.pk, error=error)
    return Fired(schedule.pk, schedule.name, scheduled, error=error)
