"""``store.usage_totals``: a removed temporary chat's tokens kept as totals per local
day and model while budgets need them, and counted by ``spent_by``; nothing kept
without ``QUOTAS``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, RunModelUsage, UsageTotal
from django_agent_sessions.store import temporary, usage

pytestmark = pytest.mark.django_db


def spent_chat(owner, session_id: str, tokens: int) -> AgentSession:
    chat = AgentSession.objects.create(session_id=session_id, owner=owner, temporary=True)
    run = AgentRun.objects.create(session=chat, status="completed", total_tokens=tokens)
    RunModelUsage.objects.create(run=run, model="demo", total_tokens=tokens)
    AgentSession.objects.filter(pk=chat.pk).update(updated_at=timezone.now() - timedelta(days=2))
    return chat


def spent(owner) -> tuple[dict[str, int], dict[str, int]]:
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return usage.spent_by.sync(owner.pk, {"day": today}, model="demo", model_since={"day": today})


def test_budgets_still_count_what_a_removed_chat_spent(make_user, settings):
    settings.AGENT_SESSIONS = {"QUOTAS": {"TOKENS_PER_DAY": 1000}}
    alice = make_user("alice")
    spent_chat(alice, "one", 120)
    spent_chat(alice, "two", 30)
    assert spent(alice) == ({"day": 150}, {"day": 150})
    assert temporary.expire(timedelta(days=1), 30) == 2
    assert not AgentRun.objects.exists()
    assert spent(alice) == ({"day": 150}, {"day": 150})
    rows = sorted(UsageTotal.objects.values_list("model", "total_tokens"))
    assert rows == [("", 150), ("demo", 150)]  # totals only: one row each


def test_nothing_is_kept_without_budgets(make_user, settings):
    settings.AGENT_SESSIONS = {}
    alice = make_user("alice")
    spent_chat(alice, "one", 120)
    assert temporary.expire(timedelta(days=1), 30) == 1
    assert not UsageTotal.objects.exists()
    assert spent(alice) == ({"day": 0}, {"day": 0})
