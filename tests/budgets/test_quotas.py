"""``usage.quotas``: budgets per calendar day and month in the project's time zone, per
model, who is exempt, and where a person stands (what is left, when it refills)."""

from __future__ import annotations

from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import AnonymousUser, Permission
from django.test import override_settings
from django.utils import timezone

from django_agent_sessions.budgets import quotas
from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store.usage import Spent, write_spent

pytestmark = pytest.mark.django_db(transaction=True)
PARIS = ZoneInfo("Europe/Paris")


@override_settings(TIME_ZONE="Europe/Paris")
def test_a_day_ends_at_the_next_local_midnight_also_on_a_dst_change():
    during = datetime(2026, 3, 29, 12, 0, tzinfo=PARIS)  # 23 hours long in Paris
    start, end = quotas.period("day", during)
    assert (start, end) == (
        datetime(2026, 3, 29, tzinfo=PARIS),
        datetime(2026, 3, 30, tzinfo=PARIS),
    )
    # Same-zone subtraction is wall-clock time: the real length is in UTC.
    assert end.astimezone(dt_timezone.utc) - start.astimezone(dt_timezone.utc) == timedelta(
        hours=23
    )


@override_settings(TIME_ZONE="Europe/Paris")
def test_a_month_runs_from_its_first_day_to_the_next_months():
    start, end = quotas.period("month", datetime(2026, 12, 31, 23, 30, tzinfo=PARIS))
    assert (start, end) == (datetime(2026, 12, 1, tzinfo=PARIS), datetime(2027, 1, 1, tzinfo=PARIS))


def _spend(owner: Any, tokens: int, model: str = "small", days_ago: float = 0) -> None:
    session = AgentSession.objects.create(
        session_id=f"q-{AgentSession.objects.count()}", owner=owner
    )
    run = AgentRun.objects.create(
        session=session,
        status="completed",
        total_tokens=tokens,
        started_at=timezone.now() - timedelta(days=days_ago),
    )
    counts = dict.fromkeys(("requests", "input_tokens", "output_tokens"), 0)
    write_spent(run.pk, Spent(by_model={model: {**counts, "total_tokens": tokens}}))


def _quotas(settings: Any, **quota: Any) -> None:
    settings.AGENT_SESSIONS = {**getattr(settings, "AGENT_SESSIONS", {}), "QUOTAS": quota}


async def test_without_budgets_everyone_is_unlimited(make_user):
    assert await quotas.standing(await _user(make_user), "small") == quotas.UNLIMITED


async def _user(make_user: Any, name: str = "ann") -> Any:
    return await sync_to_async(make_user)(name)


async def test_a_spent_daily_budget_refuses_until_the_next_local_midnight(settings, make_user):
    _quotas(settings, TOKENS_PER_DAY=1000)
    settings.TIME_ZONE = "Europe/Paris"
    ann = await _user(make_user)
    await sync_to_async(_spend)(ann, 600)
    await sync_to_async(_spend)(ann, 5000, days_ago=2)  # an earlier day's
    standing = await quotas.standing(ann, "small")
    day_ends = quotas.period("day", timezone.now())[1]
    assert (standing.remaining, standing.exceeded, standing.resets_at) == (400, False, day_ends)
    await sync_to_async(_spend)(ann, 450)
    standing = await quotas.standing(ann, "small")
    assert standing.exceeded
    assert standing.remaining == -50
    assert standing.resets_at == quotas.period("day", timezone.now())[1]
    assert timezone.localtime(standing.resets_at).hour == 0


async def test_a_models_budget_counts_only_that_model(settings, make_user):
    _quotas(settings, TOKENS_PER_MONTH=10_000, MODELS={"large": {"TOKENS_PER_DAY": 100}})
    ann = await _user(make_user)
    await sync_to_async(_spend)(ann, 150, model="large")
    assert (await quotas.standing(ann, "large")).exceeded
    small = await quotas.standing(ann, "small")
    assert not small.exceeded
    assert small.remaining == 10_000 - 150


async def test_staff_holders_of_the_permission_and_visitors_are_exempt(settings, make_user):
    _quotas(settings, TOKENS_PER_DAY=0)
    ann = await _user(make_user, "ann")
    assert (await quotas.standing(ann, "small")).exceeded
    assert (await quotas.standing(ann, "small")).resets_at is None  # nothing never refills
    staff = await _user(make_user, "staff")
    staff.is_staff = True
    assert await quotas.standing(staff, "small") == quotas.UNLIMITED
    _quotas(settings, TOKENS_PER_DAY=0, EXEMPT_STAFF=False)
    assert (await quotas.standing(staff, "small")).exceeded
    bob = await _user(make_user, "bob")
    permission = await Permission.objects.aget(codename="exempt_from_quotas")
    await sync_to_async(bob.user_permissions.add)(permission)
    assert await quotas.standing(bob, "small") == quotas.UNLIMITED
    assert await quotas.standing(AnonymousUser(), "small") == quotas.UNLIMITED
