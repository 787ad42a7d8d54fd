"""``store.items``: DjangoSession's operations, each one transaction on the conversation row.

Reading the newest items (a row that does not decode never uses up a slot), appending (the
first write creates the conversation, a title is set once), popping, clearing, taking back
the last turn, and the ownership check every one of them makes.
"""

from __future__ import annotations

from typing import Any

import pytest

from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import items
from tests.conftest import assistant_message, user_message
from tests.store.helpers import add_unreadable, call, output, scope, stored, user, write

pytestmark = pytest.mark.django_db


def texts(found: list[Any]) -> list[str]:
    return [item["content"] for item in found]


def test_the_first_append_creates_the_conversation_and_a_title_is_set_once(
    session_id: str,
) -> None:
    owner = user("alice")
    write(session_id, user_message("one"), owner_id=owner.pk, title="First title")
    row = write(session_id, user_message("two"), owner_id=owner.pk, title="Second title")
    # The title only fills an empty one: a later batch's first message does not rename.
    assert (row.owner_id, row.title, row.item_count) == (owner.pk, "First title", 2)
    assert texts(stored(session_id)) == ["one", "two"]


def test_a_batch_larger_than_one_insert_keeps_its_order(session_id: str) -> None:
    # More rows than one multi-row INSERT takes (_INSERT_CHUNK): several statements.
    batch = [user_message(f"m{n}") for n in range(items._INSERT_CHUNK + 7)]
    row = write(session_id, *batch)
    assert row.item_count == len(batch)
    assert stored(session_id) == batch


def test_read_items_returns_the_newest_oldest_first(session_id: str) -> None:
    write(session_id, *[user_message(f"m{n}") for n in range(5)])
    assert texts(items.read_items(scope(session_id), 2)) == ["m3", "m4"]
    assert texts(items.read_items(scope(session_id), None)) == [f"m{n}" for n in range(5)]
    assert texts(items.read_items(scope(session_id), 50)) == [f"m{n}" for n in range(5)]
    # A limit of zero or below reads nothing (and does not mean "all").
    assert items.read_items(scope(session_id), 0) == []
    assert items.read_items(scope(session_id), -3) == []
    assert items.read_items(scope("no-such-conversation"), 5) == []


def test_an_unreadable_row_does_not_use_up_a_slot(session_id: str) -> None:
    row = write(session_id, user_message("a"), user_message("b"))
    add_unreadable(row)
    write(session_id, user_message("c"))
    add_unreadable(AgentSession.objects.get(pk=row.pk))
    # The window widens past both bad rows: still exactly two items.
    assert texts(items.read_items(scope(session_id), 2)) == ["b", "c"]
    assert texts(items.read_items(scope(session_id), None)) == ["a", "b", "c"]


def test_a_pop_past_unreadable_rows_counts_every_row_it_removed(session_id: str) -> None:
    row = write(session_id, user_message("a"), user_message("b"))
    add_unreadable(row)  # the two newest rows do not decode
    add_unreadable(row)
    assert items.pop_newest(scope(session_id)) == user_message("b")
    left = AgentSession.objects.get(pk=row.pk)
    assert left.item_count == left.items.count() == 1


def test_every_operation_refuses_another_owners_conversation(session_id: str) -> None:
    alice, bob = user("alice"), user("bob")
    write(session_id, user_message("mine"), owner_id=alice.pk)
    foreign = scope(session_id, bob.pk)
    operations = [
        lambda: items.read_items(foreign, 0),  # even a read of nothing is refused
        lambda: items.append_items(foreign, [], ""),
        lambda: items.pop_newest(foreign),
        lambda: items.clear(foreign),
        lambda: items.take_back_last_turn(foreign),
    ]
    for operation in operations:
        with pytest.raises(SessionOwnershipError):
            operation()
    assert texts(stored(session_id)) == ["mine"]
    # Trusted server code (no owner) reads anyone's conversation.
    assert texts(items.read_items(scope(session_id), None)) == ["mine"]


def test_pop_newest_removes_exactly_the_newest_item(session_id: str) -> None:
    write(session_id, user_message("a"), user_message("b"))
    assert items.pop_newest(scope(session_id)) == user_message("b")
    assert items.pop_newest(scope(session_id)) == user_message("a")
    assert items.pop_newest(scope(session_id)) is None
    assert AgentSession.objects.get(session_id=session_id).item_count == 0
    # Popping a conversation that does not exist creates nothing.
    assert items.pop_newest(scope("no-such-conversation")) is None
    assert not AgentSession.objects.filter(session_id="no-such-conversation").exists()


def test_clear_deletes_the_items_and_keeps_the_row(session_id: str) -> None:
    owner = user("alice")
    write(session_id, user_message("a"), user_message("b"), owner_id=owner.pk, title="Kept")
    items.clear(scope(session_id, owner.pk))
    row = AgentSession.objects.get(session_id=session_id)
    assert (row.owner_id, row.title, row.item_count) == (owner.pk, "Kept", 0)
    assert stored(session_id) == []


def test_take_back_last_turn_deletes_from_the_newest_user_message_on(session_id: str) -> None:
    first = [user_message("hi"), assistant_message("hello")]
    turn = [user_message("time?"), call("c1"), output("c1"), assistant_message("noon")]
    write(session_id, *first, *turn)
    assert items.take_back_last_turn(scope(session_id)) == turn
    assert stored(session_id) == first
    assert AgentSession.objects.get(session_id=session_id).item_count == 2
    # Without a user message there is no turn to take back: nothing changes.
    write("no-question", assistant_message("a greeting"), call("c1"))
    assert items.take_back_last_turn(scope("no-question")) is None
    assert stored("no-question") == [assistant_message("a greeting"), call("c1")]
    assert items.take_back_last_turn(scope("no-such-conversation")) is None
