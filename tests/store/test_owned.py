"""``store.owned``: a user's own conversations as the chat page lists and changes them.

Only the owner finds one to change; a conversation with a live or waiting run is refused
(``Busy``) and left as it was; taking back the first turn forgets its automatic title.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import keeping, owned
from tests.conftest import assistant_message, user_message
from tests.store.helpers import stored, user, write

pytestmark = pytest.mark.django_db


def aged(session_id: str, owner: Any, minutes: int, title: str = "") -> AgentSession:
    row = write(session_id, user_message("hi"), owner_id=owner.pk, title=title)
    AgentSession.objects.filter(pk=row.pk).update(
        updated_at=timezone.now() - timedelta(minutes=minutes)
    )
    return row


def test_a_users_list_is_theirs_newest_first() -> None:
    alice, bob = user("alice"), user("bob")
    aged("old", alice, 30, "Old")
    aged("new", alice, 1, "New")
    aged("middle", alice, 10)
    aged("bobs", bob, 0)
    assert owned.latest_of(alice) == "new"
    assert [row["session_id"] for row in keeping.listed(alice.pk, 10)] == ["new", "middle", "old"]
    assert [row["title"] for row in keeping.listed(alice.pk, 2)] == ["New", ""]
    assert owned.latest_of(user("carol")) is None
    assert owned.find("old") == (alice.pk, "Old")
    assert owned.find("no-such") is None


def test_only_the_owner_renames() -> None:
    alice, bob = user("alice"), user("bob")
    aged("mine", alice, 0)
    owned.rename("mine", alice, "Renamed")
    for name, who in (("mine", bob), ("no-such", alice)):
        with pytest.raises(owned.NotFound):
            owned.rename(name, who, "Hijacked")
    assert owned.find("mine") == (alice.pk, "Renamed")


def test_delete_takes_the_items_and_the_run_records() -> None:
    alice, bob = user("alice"), user("bob")
    row = aged("mine", alice, 0)
    AgentRun.objects.create(session=row, status="completed")
    with pytest.raises(owned.NotFound):
        owned.delete("mine", bob)
    assert SessionItem.objects.filter(session=row).count() == 1
    owned.delete("mine", alice)
    assert not AgentSession.objects.exists()
    assert not SessionItem.objects.exists()
    assert not AgentRun.objects.exists()


@pytest.mark.parametrize(
    "change",
    [
        lambda who: owned.delete("mine", who),
        lambda who: owned.clear("mine", who),
        lambda who: owned.take_back_turn("mine", who),
    ],
    ids=["delete", "clear", "take_back_turn"],
)
@pytest.mark.parametrize("status", ["running", "waiting"])
def test_a_live_or_waiting_run_keeps_the_conversation_as_it_is(
    change: Callable[[Any], Any], status: str
) -> None:
    alice = user("alice")
    row = aged("mine", alice, 0)
    AgentRun.objects.create(
        session=row, status=status, lease_expires_at=timezone.now() + timedelta(minutes=1)
    )
    with pytest.raises(owned.Busy):
        change(alice)
    assert stored("mine") == [user_message("hi")]


def test_a_run_whose_worker_died_does_not_hold_the_conversation() -> None:
    alice = user("alice")
    row = aged("mine", alice, 0)
    # "running" on paper, but its lease expired: its worker is gone.
    AgentRun.objects.create(session=row, lease_expires_at=timezone.now() - timedelta(seconds=1))
    owned.clear("mine", alice)
    assert stored("mine") == []
    assert AgentSession.objects.get(pk=row.pk).item_count == 0


def test_taking_back_the_first_turn_forgets_its_automatic_title() -> None:
    alice = user("alice")
    first = [user_message("What is   the weather?"), assistant_message("Sunny.")]
    write("auto", *first, owner_id=alice.pk, title="What is the weather?")
    assert owned.take_back_turn("auto", alice) == first
    assert owned.find("auto") == (alice.pk, "")
    # A title the user chose stays.
    write("chosen", *first, owner_id=alice.pk, title="Weather")
    owned.take_back_turn("chosen", alice)
    assert owned.find("chosen") == (alice.pk, "Weather")


def test_a_later_turn_keeps_the_title_of_the_first() -> None:
    alice = user("alice")
    write("same", user_message("Hello"), owner_id=alice.pk, title="Hello")
    # The second message has the same text: the first, still stored, keeps the title.
    write("same", user_message("Hello"), assistant_message("Hi"), owner_id=alice.pk)
    assert owned.take_back_turn("same", alice) == [user_message("Hello"), assistant_message("Hi")]
    assert owned.find("same") == (alice.pk, "Hello")
    assert owned.take_back_turn("same", alice) == [user_message("Hello")]
    assert owned.find("same") == (alice.pk, "")
    assert owned.take_back_turn("same", alice) is None  # nothing left to take back


@pytest.mark.django_db(transaction=True)
def test_a_branch_names_its_origin():
    alice = user("alice")
    async_to_sync(DjangoSession("orig", owner=alice).add_items)([user_message("hi")])
    async_to_sync(DjangoSession("orig", owner=alice).fork)("copy")
    assert owned.origin_of("copy") == ("orig", "hi")
    assert owned.origin_of("orig") is None
