"""A conversation ChatKit did not start: its messages read as ChatKit's items, then
adopted in order before ChatKit's first item, so the thread keeps one order."""

from __future__ import annotations

import pytest

from django_agent_sessions import serialization
from django_agent_sessions.models import AgentSession, ChatKitItem, SessionItem
from django_agent_sessions.store import items as session_items
from django_agent_sessions.store.chatkit import Missing, adopted, items
from django_agent_sessions.store.chatkit.adopted import SDK
from tests.store.chatkit.helpers import answered, said

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(django_user_model):
    """Alice's conversation of the packaged chat: a question, a tool call, an answer."""
    user = django_user_model.objects.create_user("alice")
    call = {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"}
    encoded = [
        serialization.encode_item(item, index=0, max_bytes=None, max_depth=50)
        for item in (said("Weather?"), call, answered("Sunny."))
    ]
    session_items.append_items(session_items.Scope("conv-1", user.pk, "default"), encoded, "")
    return user


def _ids(owner, after=None, limit=10, order="asc") -> tuple[list[str], bool]:
    found = items.page.sync(owner.pk, "conv-1", after, limit, order)
    return [row.item_id for row in found.rows], found.has_more


def test_its_messages_read_as_items_until_chatkit_writes(alice):
    message_pks = list(
        SessionItem.objects.filter(role__in=["user", "assistant"]).values_list("pk", flat=True)
    )
    first, last = (f"sdk_{pk}" for pk in message_pks)
    assert _ids(alice) == ([first, last], False)  # the tool call is not a message
    assert _ids(alice, limit=1, order="desc") == ([last], True)
    assert _ids(alice, after=first) == ([last], False)
    row = items.load.sync(alice.pk, "conv-1", first)
    assert (row.kind, row.sdk) == (SDK, SessionItem.objects.get(pk=message_pks[0]).payload)
    assert not ChatKitItem.objects.exists()
    with pytest.raises(Missing):
        _ids(alice, after="sdk_x")


def test_chatkits_first_item_adopts_them_first(alice):
    items.add.sync(alice.pk, "conv-1", "msg_1", "user_message", "{}", said("Tomorrow?"))
    rows = items.page.sync(alice.pk, "conv-1", None, 10, "asc").rows
    assert [row.kind for row in rows] == [SDK, SDK, "user_message"]
    assert [row.sdk for row in rows[:2]] == [
        SessionItem.objects.get(pk=int(row.item_id[4:])).payload for row in rows[:2]
    ]
    adopted.adopt(AgentSession.objects.get().pk, "default")  # once only
    assert ChatKitItem.objects.count() == 3


def test_a_message_taken_back_in_the_chat_leaves_the_thread(alice):
    items.add.sync(alice.pk, "conv-1", "msg_1", "user_message", "{}", said("Tomorrow?"))
    SessionItem.objects.filter(role="assistant").delete()
    assert [row.kind for row in items.page.sync(alice.pk, "conv-1", None, 10, "asc").rows] == [
        SDK,
        "user_message",
    ]
