"""Scheduled runs' rows (``store/schedules.py``): what is due, the compare-and-set claim
that one claimant of a firing wins (also when many threads claim it at once), and the
outcome of a claimed firing."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django import db
from django.utils import timezone

from django_agent_sessions.models import ScheduledRun
from django_agent_sessions.store import schedules

pytestmark = pytest.mark.django_db(transaction=True)

EVERY = timedelta(minutes=10)


def _due(name: str = "report", *, ago: timedelta = timedelta(0), **fields: object):
    now = timezone.now()
    return ScheduledRun.objects.create(
        name=name, input="x", every=EVERY, next_fire_at=now - ago, **fields
    )


def test_due_reads_enabled_schedules_whose_time_came_most_overdue_first():
    now = timezone.now()
    later = _due("later", ago=timedelta(seconds=1))
    earlier = _due("earlier", ago=timedelta(minutes=3))
    _due("off", ago=timedelta(minutes=5), enabled=False)
    ScheduledRun.objects.create(
        name="future", input="x", every=EVERY, next_fire_at=now + timedelta(minutes=1)
    )
    assert [s.name for s in schedules.due(now)] == ["earlier", "later"]
    assert [s.pk for s in schedules.due(now, limit=1)] == [earlier.pk]
    assert later.pk in [s.pk for s in schedules.due(now + timedelta(minutes=2))]


def test_a_firing_is_claimed_by_the_first_claimant_only():
    schedule = _due()
    scheduled, now = schedule.next_fire_at, timezone.now()
    claim = {"expected": scheduled, "next_fire_at": scheduled + EVERY, "fired_at": now}
    assert schedules.claim(schedule.pk, **claim) is True
    assert schedules.claim(schedule.pk, **claim) is False
    schedule.refresh_from_db()
    assert (schedule.next_fire_at, schedule.last_fired_at) == (scheduled + EVERY, now)


def test_a_disabled_schedule_is_not_claimed():
    schedule = _due(enabled=False)
    assert not schedules.claim(
        schedule.pk,
        expected=schedule.next_fire_at,
        next_fire_at=schedule.next_fire_at + EVERY,
        fired_at=timezone.now(),
    )


def test_a_skipped_firing_moves_on_without_firing_and_says_why():
    schedule = _due(ago=timedelta(hours=1))
    assert schedules.claim(
        schedule.pk,
        expected=schedule.next_fire_at,
        next_fire_at=timezone.now() + EVERY,
        fired_at=None,
        note="Missed the firing: skipped.",
    )
    schedule.refresh_from_db()
    assert (schedule.last_fired_at, schedule.last_error) == (None, "Missed the firing: skipped.")


def test_many_threads_claiming_one_firing_have_one_winner():
    schedule = _due()
    start = threading.Barrier(8)
    won: list[bool] = []

    def claim() -> None:
        start.wait()
        try:
            won.append(
                schedules.claim(
                    schedule.pk,
                    expected=schedule.next_fire_at,
                    next_fire_at=schedule.next_fire_at + EVERY,
                    fired_at=timezone.now(),
                )
            )
        finally:
            db.connection.close()

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False] * 7 + [True]


def test_the_outcome_names_the_run_or_the_error_and_keeps_the_last_run():
    schedule = _due()
    schedules.record(schedule.pk, run_id="run-1")
    schedules.record(schedule.pk, error="busy: " + "x" * 3000)
    schedule.refresh_from_db()
    assert schedule.last_run_id == "run-1"
    assert schedule.last_error.startswith("busy: ")
    assert len(schedule.last_error) == schedules.ERROR_CHARS
    schedules.record(schedule.pk, run_id="run-2")
    schedule.refresh_from_db()
    assert (schedule.last_run_id, schedule.last_error) == ("run-2", "")


def test_the_next_firing_of_the_enabled_schedules_is_what_a_scheduler_sleeps_until():
    assert schedules.next_due_at() is None
    now = timezone.now()
    _due("off", ago=-timedelta(seconds=5), enabled=False)
    assert schedules.next_due_at() is None
    soon = _due("soon", ago=-timedelta(seconds=30))
    _due("later", ago=-timedelta(minutes=3))
    assert schedules.next_due_at() == soon.next_fire_at
    assert soon.next_fire_at > now
