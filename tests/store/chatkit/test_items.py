"""A thread's items keep ChatKit's JSON in order, and its messages are the
conversation's SDK items: appended, changed and deleted together, exactly."""

from __future__ import annotations

import json

import pytest

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession, ChatKitItem, SessionItem
from django_agent_sessions.store.chatkit import Missing, items, threads
from tests.store.chatkit.helpers import answered, payload, said

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(django_user_model):
    user = django_user_model.objects.create_user("alice")
    threads.save.sync(user.pk, "thr_1", "{}", "")
    return user


def _payloads(owner, order: str) -> list[str]:
    return [row.payload for row in items.page.sync(owner.pk, "thr_1", None, 10, order).rows]


def _sdk_items() -> list:
    return [row.data for row in SessionItem.objects.order_by("pk")]


def test_messages_are_mirrored_and_other_items_are_not(alice):
    items.add.sync(alice.pk, "thr_1", "msg_1", "user_message", payload("msg_1"), said("Hi"))
    items.add.sync(alice.pk, "thr_1", "wid_1", "widget", payload("wid_1", "widget"), None)
    items.add.sync(
        alice.pk, "thr_1", "msg_2", "assistant_message", payload("msg_2"), answered("Yo")
    )
    assert _sdk_items() == [said("Hi"), answered("Yo")]
    assert AgentSession.objects.get().item_count == 2
    mirrors = ChatKitItem.objects.order_by("pk").values_list("item_id", "session_item_id")
    ids = list(SessionItem.objects.order_by("pk").values_list("pk", flat=True))
    assert list(mirrors) == [("msg_1", ids[0]), ("wid_1", None), ("msg_2", ids[1])]
    assert _payloads(alice, "asc") == [
        payload("msg_1"),
        payload("wid_1", "widget"),
        payload("msg_2"),
    ]


def test_any_text_round_trips_on_both_sides(alice):
    text = "nul \x00, emoji 🐱, RTL שלום"
    chatkit_json = json.dumps(text, ensure_ascii=False)  # as pydantic writes it: \u0000
    items.add.sync(alice.pk, "thr_1", "msg_1", "user_message", chatkit_json, said(text))
    assert items.load.sync(alice.pk, "thr_1", "msg_1").payload == chatkit_json
    assert _sdk_items() == [said(text)]


def test_saving_changes_an_item_in_place_or_appends_it(alice):
    items.add.sync(alice.pk, "thr_1", "msg_1", "assistant_message", "old", answered(""))
    items.add.sync(alice.pk, "thr_1", "msg_2", "user_message", "next", said("Next"))
    items.save.sync(alice.pk, "thr_1", "msg_1", "assistant_message", "new", answered("Done"))
    items.save.sync(alice.pk, "thr_1", "wid_1", "widget", "widget", None)
    assert _payloads(alice, "asc") == [
        "new",
        "next",
        "widget",
    ]
    assert _sdk_items() == [answered("Done"), said("Next")]


def test_deleting_an_item_deletes_its_sdk_form(alice):
    items.add.sync(alice.pk, "thr_1", "msg_1", "user_message", "a", said("A"))
    items.add.sync(alice.pk, "thr_1", "msg_2", "user_message", "b", said("B"))
    items.delete.sync(alice.pk, "thr_1", "msg_1")
    items.delete.sync(alice.pk, "thr_1", "msg_9")  # not there: nothing
    assert _sdk_items() == [said("B")]
    assert AgentSession.objects.get().item_count == 1
    assert _payloads(alice, "desc") == ["b"]


@pytest.mark.django_db(transaction=True)  # the hop's thread sees the committed rows
async def test_the_session_reads_the_mirrored_messages(alice):
    await items.add(alice.pk, "thr_1", "msg_1", "user_message", "a", said("Hi"))
    assert await DjangoSession("thr_1", owner=alice).get_items() == [said("Hi")]


def test_another_owner_finds_no_items_and_writes_none(alice, django_user_model):
    bob = django_user_model.objects.create_user("bob")
    items.add.sync(alice.pk, "thr_1", "msg_1", "user_message", "a", said("A"))
    assert _payloads(bob, "asc") == []
    with pytest.raises(Missing):
        items.load.sync(bob.pk, "thr_1", "msg_1")
    with pytest.raises(Missing):
        items.add.sync(bob.pk, "thr_1", "msg_2", "user_message", "b", said("B"))
    with pytest.raises(Missing):
        items.delete.sync(bob.pk, "thr_1", "msg_1")
    assert ChatKitItem.objects.count() == SessionItem.objects.count() == 1
