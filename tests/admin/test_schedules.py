"""The ScheduledRun admin: schedules are added and changed here (their first firing
computed, a changed timing starting again from now), listed with their timing and a
link to their last run, and "fire now" makes the enabled ones due."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from django_agent_sessions.models import ScheduledRun

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:django_agent_sessions_scheduledrun_changelist")
ADD = reverse("admin:django_agent_sessions_scheduledrun_add")


def _form(**fields: str) -> dict[str, str]:
    return {
        "name": "Morning report",
        "agent": "tests.chat_agent.make_demo_agent",
        "input": "Summarise yesterday.",
        "enabled": "on",
        "every": "",
        "cron": "",
        "next_fire_at_0": "",
        "next_fire_at_1": "",
        **fields,
    }


def test_a_schedule_is_added_with_one_timing(superuser):
    refused = superuser.post(ADD, _form())
    assert "Give an interval (every) or a cron expression: one of them." in refused.content.decode()
    before = timezone.now()
    assert superuser.post(ADD, _form(cron="0 9 * * 1-5")).status_code == 302
    schedule = ScheduledRun.objects.get()
    assert schedule.next_fire_at is not None
    assert schedule.next_fire_at > before


def test_a_changed_timing_starts_again_from_now(superuser):
    schedule = ScheduledRun.objects.create(
        name="Morning report", input="x", every=timedelta(days=1)
    )
    change = reverse("admin:django_agent_sessions_scheduledrun_change", args=[schedule.pk])
    superuser.post(change, _form(every="00:10:00"))
    schedule.refresh_from_db()
    assert schedule.next_fire_at is not None
    assert schedule.next_fire_at <= timezone.now() + timedelta(minutes=10)
    by_hand = "2030-01-01"
    superuser.post(change, _form(every="00:20:00", next_fire_at_0=by_hand, next_fire_at_1="09:00"))
    schedule.refresh_from_db()
    assert schedule.next_fire_at.isoformat() == "2030-01-01T09:00:00+00:00"


def test_the_list_shows_the_timing_and_links_the_last_run(superuser):
    ScheduledRun.objects.create(
        name="Morning report",
        input="x",
        cron="0 9 * * *",
        last_run_id="6b1f0c1e-0000-4000-8000-000000000001",
        last_error="busy: " + "x" * 200,
    )
    body = superuser.get(CHANGELIST).content.decode()
    assert "cron 0 9 * * *" in body
    runs = reverse("admin:django_agent_sessions_agentrun_changelist")
    assert f'href="{runs}?q=6b1f0c1e-0000-4000-8000-000000000001"' in body
    assert "busy: " + "x" * 74 + "…" in body
    assert "(the AGENT setting)" in body


def test_fire_now_makes_the_enabled_schedules_due(superuser):
    on = ScheduledRun.objects.create(name="on", input="x", every=timedelta(days=1))
    off = ScheduledRun.objects.create(name="off", input="x", every=timedelta(days=1), enabled=False)
    page = superuser.post(
        CHANGELIST,
        {"action": "fire_now", "_selected_action": [on.pk, off.pk]},
        follow=True,
    )
    assert "1 schedule is due: the schedulers&#x27; next pass fires it." in page.content.decode()
    on.refresh_from_db()
    off.refresh_from_db()
    assert on.next_fire_at <= timezone.now()
    assert off.next_fire_at > timezone.now()
