"""``store.keeping``: a person's list (pinned first, archived left out until asked for,
filtered by agent), pinning and archiving only their own, and the search without
archived conversations."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import keeping, owned
from tests.conftest import user_message
from tests.store.helpers import user, write

pytestmark = pytest.mark.django_db


def aged(session_id: str, owner: Any, minutes: int, text: str = "hi") -> AgentSession:
    row = write(session_id, user_message(text), owner_id=owner.pk)
    AgentSession.objects.filter(pk=row.pk).update(
        updated_at=timezone.now() - timedelta(minutes=minutes)
    )
    return row


def ran(conversation: AgentSession, agent: str) -> None:
    AgentRun.objects.create(session=conversation, agent_name=agent, status="completed")


def ids(owner: Any, **kwargs: Any) -> list[str]:
    return [row["session_id"] for row in keeping.listed(owner.pk, 50, **kwargs)]


def test_pinned_come_first_then_the_most_recent_and_archived_only_when_asked():
    alice = user("alice")
    for name, minutes in (("old", 30), ("middle", 10), ("new", 1)):
        aged(name, alice, minutes)
    assert ids(alice) == ["new", "middle", "old"]
    keeping.keep("old", alice.pk, pinned=True)
    keeping.keep("new", alice.pk, archived=True)
    with CaptureQueriesContext(connection) as listing:
        assert ids(alice) == ["old", "middle"]
    assert len(listing) == 1
    assert ids(alice, archived=True) == ["old", "new", "middle"]
    [row] = [row for row in keeping.listed(alice.pk, 50, archived=True) if row["pinned"]]
    assert (row["session_id"], row["archived_at"]) == ("old", None)
    keeping.keep("new", alice.pk, archived=False)
    keeping.keep("old", alice.pk, pinned=False)
    assert ids(alice) == ["new", "middle", "old"]
    # Keeping is not activity: the order of the rest never moved.
    assert owned.latest_of(alice) == "new"


def test_archiving_changes_nothing_but_the_row_and_the_latest_skips_it():
    alice = user("alice")
    row = aged("gone", alice, 5)
    row.refresh_from_db()
    aged("kept", alice, 1)
    with CaptureQueriesContext(connection) as archiving:
        keeping.keep("gone", alice.pk, archived=True, pinned=True)
    assert len(archiving) == 1  # one UPDATE
    after = AgentSession.objects.get(pk=row.pk)
    assert after.archived_at is not None
    assert after.pinned
    assert (after.updated_at, after.item_count, after.title) == (
        row.updated_at,
        row.item_count,
        row.title,
    )
    assert owned.latest_of(alice) == "kept"


def test_only_the_owner_keeps_and_nothing_changes_for_anyone_else():
    alice, bob = user("alice"), user("bob")
    aged("mine", alice, 0)
    for session_id in ("mine", "no-such"):
        with pytest.raises(owned.NotFound):
            keeping.keep(session_id, bob.pk, pinned=True, archived=True)
    with pytest.raises(owned.NotFound):
        keeping.keep("no-such", alice.pk)
    keeping.keep("mine", alice.pk)  # nothing asked: it is hers, so no error
    assert AgentSession.objects.filter(pinned=True).count() == 0
    assert AgentSession.objects.filter(archived_at__isnull=False).count() == 0


def test_the_agent_filter_lists_the_conversations_an_agent_ran_in():
    alice, bob = user("alice"), user("bob")
    ran(aged("weather", alice, 2), "Weather")
    both = aged("both", alice, 1)
    ran(both, "Weather")
    ran(both, "Billing")
    aged("none", alice, 0)
    ran(aged("bobs", bob, 0), "Secret agent")
    assert ids(alice, agent="Weather") == ["both", "weather"]
    assert ids(alice, agent="Billing") == ["both"]
    assert ids(alice, agent="Secret agent") == []
    assert keeping.agents_of(alice.pk) == ["Billing", "Weather"]
    assert keeping.recent_agents() == ["Billing", "Secret agent", "Weather"]
    assert keeping.recent_agents(runs=1) == ["Secret agent"]  # the newest run's


def test_the_search_leaves_archived_conversations_out_until_asked():
    alice = user("alice")
    aged("kept", alice, 1, "Lisbon trains")
    for n in range(30):  # archived hits that would fill the first results
        aged(f"archived-{n}", alice, 0, f"Lisbon trip {n}")
        keeping.keep(f"archived-{n}", alice.pk, archived=True)
    hits = keeping.search_kept(alice.pk, "lisbon", 5)
    assert {hit.session_id for hit in hits} == {"kept"}
    assert [hit.item_id is not None for hit in hits] == [True]  # its message (no title)
    shown = keeping.search_kept(alice.pk, "lisbon", 5, archived=True)
    assert len(shown) == 5
    assert "kept" not in {hit.session_id for hit in shown}
