"""When a schedule fires (``schedules/timing.py``): an interval keeps its phase, a cron
expression is read in the project's time zone, a late firing is on time within the grace
and missed past it, and one claim never leaves the next firing in the past."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from django_agent_sessions.schedules import timing

T0 = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)  # a Monday
MINUTE, HOUR = timedelta(minutes=1), timedelta(hours=1)
GRACE = timedelta(minutes=5)


def _plan(scheduled: datetime, now: datetime, *, policy: str = "skip", **timing_: object):
    every = timing_.get("every")
    cron = str(timing_.get("cron", ""))
    return timing.plan(
        every=every,  # type: ignore[arg-type]
        cron=cron,
        scheduled=scheduled,
        now=now,
        policy=policy,
        grace=GRACE,
    )


def test_the_first_firing_is_an_interval_away_or_the_next_cron_time():
    assert timing.first_firing(every=HOUR, cron="", now=T0) == T0 + HOUR
    assert timing.first_firing(every=None, cron="30 9 * * *", now=T0) == T0 + 30 * MINUTE
    # A moment on the series is not "after" itself.
    assert timing.first_firing(every=None, cron="0 9 * * *", now=T0) == T0 + 24 * HOUR


def test_an_interval_keeps_its_phase_and_the_next_firing_is_in_the_future():
    on_time = _plan(T0, T0 + 20 * timedelta(seconds=1), every=HOUR)
    assert (on_time.fire, on_time.missed, on_time.next_fire_at) == (True, False, T0 + HOUR)
    # Three firings passed (9:00, 9:01, 9:02): one claim, one firing, next at 9:03.
    late = _plan(T0, T0 + 2 * MINUTE + timedelta(seconds=30), every=MINUTE)
    assert (late.fire, late.next_fire_at) == (True, T0 + 3 * MINUTE)
    exact = _plan(T0, T0 + 2 * MINUTE, every=MINUTE)
    assert exact.next_fire_at == T0 + 3 * MINUTE


def test_a_cron_expression_is_read_in_the_project_time_zone(settings):
    settings.TIME_ZONE = "Europe/Paris"  # UTC+1 in January, UTC+2 from the last Sunday of March
    assert timing.first_firing(every=None, cron="0 9 * * *", now=T0) == datetime(
        2025, 1, 7, 8, 0, tzinfo=timezone.utc
    )
    before_dst = datetime(2025, 3, 29, 12, 0, tzinfo=timezone.utc)
    assert timing.first_firing(every=None, cron="0 9 * * *", now=before_dst) == datetime(
        2025, 3, 30, 7, 0, tzinfo=timezone.utc
    )


def test_weekdays_only_skip_the_weekend():
    friday_evening = datetime(2025, 1, 10, 18, 0, tzinfo=timezone.utc)
    assert timing.first_firing(every=None, cron="0 9 * * 1-5", now=friday_evening) == datetime(
        2025, 1, 13, 9, 0, tzinfo=timezone.utc
    )


@pytest.mark.parametrize("policy", ["skip", "once"])
def test_a_firing_late_within_the_grace_fires_under_either_policy(policy):
    plan = _plan(T0, T0 + GRACE, policy=policy, cron="0 9 * * *")
    assert (plan.fire, plan.missed, plan.next_fire_at) == (True, False, T0 + 24 * HOUR)


def test_a_missed_firing_is_skipped_or_fired_once_by_policy():
    # Schedulers down from 8:00 to 15:00: the 9:00 firing was missed.
    now = T0 + 6 * HOUR
    skipped = _plan(T0, now, policy="skip", cron="0 9 * * *")
    caught_up = _plan(T0, now, policy="once", cron="0 9 * * *")
    assert (skipped.fire, skipped.missed) == (False, True)
    assert (caught_up.fire, caught_up.missed) == (True, True)
    # Either way the next firing is tomorrow's, not one per missed hour or day.
    assert skipped.next_fire_at == caught_up.next_fire_at == T0 + 24 * HOUR


def test_the_latest_firing_that_passed_decides_whether_the_firing_was_missed():
    # Hourly, down for 3 hours: 9:00 and 10:00 were missed, but 12:00 passed a minute ago.
    plan = _plan(T0, T0 + 3 * HOUR + MINUTE, policy="skip", every=HOUR)
    assert (plan.fire, plan.missed, plan.next_fire_at) == (True, False, T0 + 4 * HOUR)
    cron = _plan(T0, T0 + 3 * HOUR + MINUTE, policy="skip", cron="0 * * * *")
    assert (cron.fire, cron.next_fire_at) == (True, T0 + 4 * HOUR)


def test_a_time_set_by_hand_off_the_cron_series_counts_as_a_firing():
    by_hand = T0 + 17 * MINUTE
    plan = _plan(by_hand, by_hand + MINUTE, cron="0 9 * * *")
    assert (plan.fire, plan.next_fire_at) == (True, T0 + 24 * HOUR)


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("*/15 * * * *", None),
        ("0 9 * * 1-5", None),
        ("@daily", None),
        (" 0 9 * * * ", None),
        ("", "empty"),
        ("0 9 * *", "has 4 fields"),
        ("0 9 * * * 30", "has 6 fields"),
        ("61 9 * * *", "not a valid cron expression"),
        ("every day", "has 2 fields"),
    ],
)
def test_cron_expressions_are_five_fields_or_a_nickname(expression, error):
    found = timing.cron_error(expression)
    assert found is None if error is None else error in str(found)


def test_a_schedule_reads_as_its_timing():
    assert timing.describe(every=HOUR, cron="") == "every 1:00:00"
    assert timing.describe(every=None, cron="0 9 * * *") == "cron 0 9 * * *"
