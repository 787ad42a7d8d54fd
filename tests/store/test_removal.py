"""``store.removal``: clearing, deleting and pruning conversations in transactions.

``tests/test_retention.py`` tests the same operations through ``retention``, their public
face (item selects, a conversation that becomes active during a prune); these check the
counts each returns, what goes with a conversation, and the age boundary of a prune.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, SessionItem, ToolApproval
from django_agent_sessions.store import removal
from tests.conftest import user_message
from tests.store.helpers import write

pytestmark = pytest.mark.django_db


def conversation(
    session_id: str, items: int, *, updated_at: datetime | None = None
) -> AgentSession:
    row = write(session_id, *[user_message(f"m{n}") for n in range(items)])
    if updated_at is not None:
        AgentSession.objects.filter(pk=row.pk).update(updated_at=updated_at)
        row.refresh_from_db()
    return row


def test_clearing_empties_the_conversations_and_keeps_their_rows() -> None:
    long_ago = timezone.now() - timedelta(days=9)
    one = conversation("one", 3, updated_at=long_ago)
    two = conversation("two", 2, updated_at=long_ago)
    conversation("kept", 4, updated_at=long_ago)
    removed = removal.clear_conversations([one.pk, two.pk, 10**9])
    assert removed == removal.Removed(conversations=2, items=5)
    assert SessionItem.objects.filter(session__in=[one, two]).count() == 0
    rows = {row.session_id: row for row in AgentSession.objects.all()}
    assert (rows["one"].item_count, rows["two"].item_count, rows["kept"].item_count) == (0, 0, 4)
    # Clearing is activity: it must not make the cleared conversations prunable at once.
    assert rows["one"].updated_at > long_ago
    assert rows["kept"].updated_at == long_ago
    assert removal.clear_conversations([]) == removal.Removed(0, 0)


def test_deleting_takes_the_items_runs_and_approvals() -> None:
    doomed = conversation("doomed", 3)
    kept = conversation("kept", 1)
    run = AgentRun.objects.create(session=doomed, status="completed")
    ToolApproval.objects.create(run=run, call_id="c1", name="pay")
    AgentRun.objects.create(session=kept, status="completed")
    removed = removal.delete_conversations([doomed.pk, 10**9])
    assert removed == removal.Removed(conversations=1, items=3)
    assert list(AgentSession.objects.values_list("session_id", flat=True)) == ["kept"]
    assert list(AgentRun.objects.values_list("session_id", flat=True)) == [kept.pk]
    assert not ToolApproval.objects.exists()
    assert SessionItem.objects.count() == 1


def test_deleting_more_conversations_than_one_statement_takes() -> None:
    # More primary keys than one IN list carries (DEFAULT_BATCH_SIZE per statement).
    rows = [conversation(f"c{n}", 1) for n in range(removal.DEFAULT_BATCH_SIZE + 3)]
    removed = removal.delete_conversations([row.pk for row in rows])
    assert removed == removal.Removed(conversations=len(rows), items=len(rows))
    assert not AgentSession.objects.exists()


@pytest.mark.parametrize("batch_size", [1, 2, removal.DEFAULT_BATCH_SIZE])
def test_prune_deletes_what_was_idle_longer_than_the_age(batch_size: int) -> None:
    now = timezone.now()
    for days, items in ((40, 2), (31, 3), (30, 4), (29, 5)):
        conversation(f"idle-{days}", items, updated_at=now - timedelta(days=days))
    planned = removal.prune(timedelta(days=30), dry_run=True, now=now)
    assert planned == removal.Removed(conversations=2, items=5)
    assert AgentSession.objects.count() == 4  # a dry run deletes nothing
    removed = removal.prune(timedelta(days=30), batch_size=batch_size, now=now)
    assert removed == planned
    # Idle for exactly the age is not "longer than" it: that conversation stays.
    remaining = AgentSession.objects.order_by("session_id").values_list("session_id", flat=True)
    assert list(remaining) == ["idle-29", "idle-30"]
    assert SessionItem.objects.count() == 9


def test_prune_measures_the_age_from_the_given_now() -> None:
    now = timezone.now()
    conversation("recent", 1, updated_at=now - timedelta(days=2))
    # Seen from a week later, a conversation idle for two days has been idle for nine.
    later = now + timedelta(days=7)
    assert removal.prune(timedelta(days=5), now=now) == removal.Removed(0, 0)
    assert removal.prune(timedelta(days=5), now=later) == removal.Removed(1, 1)


@pytest.mark.parametrize("batch_size", [0, -5])
def test_prune_refuses_a_batch_size_below_one(batch_size: int) -> None:
    conversation("old", 1, updated_at=timezone.now() - timedelta(days=99))
    with pytest.raises(ValueError, match=f"not {batch_size}"):
        removal.prune(timedelta(days=1), batch_size=batch_size)
    assert AgentSession.objects.count() == 1
