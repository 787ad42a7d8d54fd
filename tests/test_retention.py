"""Clearing, deleting and pruning conversations, without loading their items."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.checks import run_checks
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from django_agent_sessions import retention
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import removal
from tests.conversations import item_selects, make_conversation, transcript_items

pytestmark = pytest.mark.django_db


def test_default_retention_comes_from_settings():
    assert retention.default_retention() is None
    with override_settings(AGENT_SESSIONS={"RETENTION": "30d"}):
        assert retention.default_retention() == timedelta(days=30)


def test_a_bad_retention_setting_is_a_system_check_error():
    with override_settings(AGENT_SESSIONS={"RETENTION": "a month"}):
        errors = [m for m in run_checks() if m.id == "django_agent_sessions.E030"]
    assert len(errors) == 1
    assert "Invalid duration 'a month'" in errors[0].msg


def ages(*days: int) -> list[AgentSession]:
    now = timezone.now()
    return [
        make_conversation(f"c-{n}-{d}", transcript_items(), updated_at=now - timedelta(days=d))
        for n, d in enumerate(days)
    ]


def test_dry_run_counts_and_deletes_nothing():
    ages(40, 35, 31, 29, 1)
    removed = retention.prune(timedelta(days=30), dry_run=True)
    assert removed == retention.Removed(conversations=3, items=21)
    assert AgentSession.objects.count() == 5
    assert SessionItem.objects.count() == 35


@pytest.mark.parametrize("batch_size", [1, 2, 500])
def test_prune_deletes_only_idle_conversations(batch_size):
    recent = ages(40, 35, 31, 29, 1)[3:]
    with CaptureQueriesContext(connection) as captured:
        removed = retention.prune(timedelta(days=30), batch_size=batch_size)
    assert removed == retention.Removed(conversations=3, items=21)
    assert set(AgentSession.objects.all()) == set(recent)
    assert SessionItem.objects.count() == 14
    assert item_selects(captured.captured_queries) == []


def test_prune_keeps_a_conversation_that_became_active_meanwhile(monkeypatch):
    old, _ = ages(40, 35)
    real_lock = removal._lock

    def lock_after_activity(using, pks, *, before):
        # A DjangoSession write lands between the batch query and the lock.
        AgentSession.objects.filter(pk=old.pk).update(updated_at=timezone.now())
        return real_lock(using, pks, before=before)

    monkeypatch.setattr(removal, "_lock", lock_after_activity)
    removed = retention.prune(timedelta(days=30), batch_size=1)
    assert removed == retention.Removed(conversations=1, items=7)
    assert list(AgentSession.objects.all()) == [old]


def test_prune_refuses_a_bad_batch_size():
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        retention.prune(timedelta(days=1), batch_size=0)


def test_clear_keeps_rows_and_counts():
    one, two, kept = ages(1, 2, 3)
    removed = retention.clear_conversations([one.pk, two.pk])
    assert removed == retention.Removed(conversations=2, items=14)
    assert AgentSession.objects.count() == 3
    assert set(AgentSession.objects.filter(item_count=0)) == {one, two}
    assert SessionItem.objects.filter(session=kept).count() == 7


def test_delete_handles_more_ids_than_one_statement_takes():
    chosen = [make_conversation(f"c-{n}", []) for n in range(1200)]
    removed = retention.delete_conversations([c.pk for c in chosen] + [10**9])
    assert removed == retention.Removed(conversations=1200, items=0)
    assert not AgentSession.objects.exists()
