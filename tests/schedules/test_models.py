"""The scheduled run row (``schedules/models.py``): one timing, an interval or a cron
expression, said plainly when wrong; its first firing computed on save; removed with its
conversation."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from django_agent_sessions.models import AgentSession, ScheduledRun

pytestmark = pytest.mark.django_db


def _schedule(**fields: object) -> ScheduledRun:
    return ScheduledRun(name="report", input="Summarise the day.", **fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "Give an interval (every) or a cron expression: one of them."),
        (
            {"every": timedelta(hours=1), "cron": "0 9 * * *"},
            "Give either an interval (every) or a cron expression, not both.",
        ),
        ({"every": timedelta(0)}, "The interval must be longer than zero."),
        ({"cron": "0 9 * *"}, "has 4 fields; a cron expression has five"),
        ({"cron": "0 25 * * *"}, "is not a valid cron expression"),
    ],
)
def test_clean_says_what_is_wrong_with_the_timing(fields, message):
    with pytest.raises(ValidationError) as raised:
        _schedule(**fields).full_clean()
    assert message in str(raised.value)


@pytest.mark.parametrize("fields", [{"every": timedelta(minutes=15)}, {"cron": " */5 * * * * "}])
def test_one_timing_is_clean(fields):
    schedule = _schedule(**fields)
    schedule.full_clean()
    assert schedule.cron == fields.get("cron", "").strip()


def test_the_database_refuses_both_timings_or_neither():
    for fields in ({}, {"every": timedelta(hours=1), "cron": "0 9 * * *"}):
        with pytest.raises(IntegrityError), transaction.atomic():
            _schedule(**fields).save()
    with pytest.raises(IntegrityError), transaction.atomic():
        _schedule(every=timedelta(seconds=-1)).save()


def test_the_first_firing_is_computed_on_save_unless_given():
    before = timezone.now()
    hourly = ScheduledRun.objects.create(name="hourly", input="x", every=timedelta(hours=1))
    assert hourly.next_fire_at is not None
    assert before + timedelta(hours=1) <= hourly.next_fire_at <= timezone.now() + timedelta(hours=1)
    soon = timezone.now() + timedelta(seconds=5)
    given = ScheduledRun.objects.create(
        name="given", input="x", every=timedelta(hours=1), next_fire_at=soon
    )
    assert given.next_fire_at == soon
    cron = ScheduledRun.objects.create(name="cron", input="x", cron="*/5 * * * *")
    assert cron.next_fire_at is not None
    assert cron.next_fire_at.minute % 5 == 0
    assert (str(cron), cron.timing_text, hourly.timing_text) == (
        "cron",
        "cron */5 * * * *",
        "every 1:00:00",
    )


def test_a_schedule_goes_with_its_conversation():
    conversation = AgentSession.objects.create(session_id="daily-notes")
    ScheduledRun.objects.create(
        name="notes", input="x", every=timedelta(days=1), session=conversation
    )
    conversation.delete()
    assert not ScheduledRun.objects.exists()
