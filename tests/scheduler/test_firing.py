"""Firing what is due (``scheduler/firing.py``): each firing an ordinary run, started by
the real ``start_run_sync``, in the schedule's conversation or a new one each time; a
refused or failing start recorded on the schedule, never raised; a missed firing skipped
or fired once, by ``SCHEDULE_MISSED``, at a fixed ``now``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, ScheduledRun
from django_agent_sessions.scheduler.firing import fire_due
from tests.schedule_helpers import AGENT, a_schedule, runs_ended

pytestmark = pytest.mark.django_db(transaction=True)

HOUR = timedelta(hours=1)


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.AGENT_SESSIONS = {"RATE_LIMIT": None}


def test_each_firing_is_a_run_in_a_new_conversation_of_the_owner():
    owner = get_user_model().objects.create_user("alice")
    schedule = a_schedule(owner=owner)
    scheduled = schedule.next_fire_at
    [first] = fire_due()
    assert (first.schedule_id, first.name, first.scheduled_at, first.error) == (
        schedule.pk,
        "report",
        scheduled,
        "",
    )
    assert fire_due() == []  # moved on: nothing is due
    schedule.refresh_from_db()
    assert schedule.next_fire_at == scheduled + HOUR
    assert (schedule.last_run_id, schedule.last_error) == (first.run_id, "")
    assert schedule.last_fired_at is not None

    [second] = fire_due(now=scheduled + HOUR)
    runs = runs_ended([first.run_id, second.run_id])
    assert [run.status for run in runs] == ["completed", "completed"]
    conversations = [run.session for run in runs]
    assert conversations[0].pk != conversations[1].pk
    assert {c.owner_id for c in conversations} == {owner.pk}
    replies = conversations[1].items.filter(role="assistant").values_list("preview", flat=True)
    assert list(replies) == ["You said: Summarise the day."]


def test_a_schedule_of_a_conversation_continues_it():
    conversation = AgentSession.objects.create(session_id="daily-notes")
    schedule = a_schedule(session=conversation)
    [first] = fire_due()
    runs_ended([first.run_id])
    [second] = fire_due(now=schedule.next_fire_at + HOUR)
    runs_ended([second.run_id])
    assert list(AgentRun.objects.values_list("session_id", flat=True)) == [conversation.pk] * 2
    assert conversation.items.filter(role="user").count() == 2


def test_a_blank_agent_is_the_agent_setting(settings):
    settings.AGENT_SESSIONS = {"RATE_LIMIT": None, "AGENT": AGENT}
    a_schedule(agent="")
    [fired] = fire_due()
    assert [run.status for run in runs_ended([fired.run_id])] == ["completed"]


def test_a_refused_run_is_recorded_and_the_schedule_moves_on():
    conversation = AgentSession.objects.create(session_id="busy-one")
    AgentRun.objects.create(  # a live run holds the conversation
        session=conversation, lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    schedule = a_schedule(session=conversation)
    scheduled = schedule.next_fire_at
    [fired] = fire_due()
    assert (fired.run_id, fired.error.split(":")[0]) == ("", "busy")
    schedule.refresh_from_db()
    assert schedule.last_error.startswith("busy: ")
    assert (schedule.last_run_id, schedule.next_fire_at) == ("", scheduled + HOUR)
    assert AgentRun.objects.count() == 1


def test_a_schedule_that_cannot_start_stops_no_other():
    a_schedule("broken", agent="tests.nowhere.agent", next_fire_at=timezone.now() - HOUR / 60)
    a_schedule("fine")
    broken, fine = fire_due()
    assert (broken.name, broken.run_id) == ("broken", "")
    assert "tests.nowhere" in broken.error
    assert ScheduledRun.objects.get(name="broken").last_error == broken.error
    assert fine.name == "fine"
    assert fine.run_id
    runs_ended([fine.run_id])


def test_a_disabled_schedule_does_not_fire():
    a_schedule(enabled=False)
    assert fire_due() == []
    assert not AgentRun.objects.exists()


@pytest.mark.parametrize(("policy", "fires"), [("skip", False), ("once", True)])
def test_a_missed_firing_is_skipped_or_fired_once(settings, policy, fires):
    settings.AGENT_SESSIONS = {"RATE_LIMIT": None, "SCHEDULE_MISSED": policy}
    schedule = a_schedule(every=None, cron="0 9 * * *")
    nine = schedule.next_fire_at.replace(hour=9, minute=0, second=0, microsecond=0)
    ScheduledRun.objects.filter(pk=schedule.pk).update(next_fire_at=nine)
    # The schedulers were down from before 9:00 until 15:00 (SCHEDULE_GRACE: 5 minutes).
    fired = fire_due(now=nine + 6 * HOUR)
    schedule.refresh_from_db()
    assert schedule.next_fire_at == nine + 24 * HOUR  # either way: tomorrow, once
    assert len(fired) == AgentRun.objects.count() == (1 if fires else 0)
    if fires:
        assert schedule.last_run_id == fired[0].run_id
        runs_ended([fired[0].run_id])
    else:
        assert schedule.last_fired_at is None
        assert schedule.last_error == f"Missed the firing of {nine.isoformat()}: skipped."


def test_a_late_firing_within_the_grace_fires_under_skip(settings):
    settings.AGENT_SESSIONS = {"RATE_LIMIT": None, "SCHEDULE_GRACE": "10min"}
    schedule = a_schedule()
    [fired] = fire_due(now=schedule.next_fire_at + timedelta(minutes=9))
    runs_ended([fired.run_id])
