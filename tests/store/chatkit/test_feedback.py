"""ChatKit's feedback rates the assistant messages among the items it names, as the
packaged chat rates replies: one ``Feedback`` per person per reply."""

from __future__ import annotations

import pytest

from django_agent_sessions import serialization
from django_agent_sessions.exceptions import FeedbackRejected
from django_agent_sessions.models import ChatKitItem, Feedback, SessionItem
from django_agent_sessions.store import items as session_items
from django_agent_sessions.store.chatkit import Missing, feedback, items, threads
from tests.store.chatkit.helpers import answered, said

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(django_user_model):
    user = django_user_model.objects.create_user("alice")
    threads.save.sync(user.pk, "thr_1", "{}", "")
    items.add.sync(user.pk, "thr_1", "msg_1", "user_message", "{}", said("Hi"))
    items.add.sync(user.pk, "thr_1", "msg_2", "assistant_message", "{}", answered("Yo"))
    items.add.sync(user.pk, "thr_1", "wid_1", "widget", "{}", None)
    return user


def test_the_replies_among_the_items_are_rated_and_rated_again(alice):
    assert feedback.give.sync(alice, "thr_1", ["msg_1", "msg_2", "wid_1"], "positive") == 1
    assert feedback.give.sync(alice, "thr_1", ["msg_2"], "negative") == 1
    rating = Feedback.objects.get()
    reply = ChatKitItem.objects.get(item_id="msg_2")
    assert (rating.user_id, rating.item_id, rating.rating) == (alice.pk, reply.session_item_id, -1)


def test_another_users_thread_and_an_unknown_kind_are_refused(alice, django_user_model):
    bob = django_user_model.objects.create_user("bob")
    with pytest.raises(Missing):
        feedback.give.sync(bob, "thr_1", ["msg_2"], "positive")
    with pytest.raises(FeedbackRejected):
        feedback.give.sync(alice, "thr_1", ["msg_2"], "meh")
    assert not Feedback.objects.exists()


def test_a_reply_of_the_packaged_chat_is_rated_by_its_chatkit_id(django_user_model):
    carol = django_user_model.objects.create_user("carol")
    encoded = serialization.encode_items([said("Hi"), answered("Yo")], max_bytes=None, max_depth=50)
    session_items.append_items(session_items.Scope("conv-1", carol.pk, "default"), encoded, "")
    items.add.sync(carol.pk, "conv-1", "msg_9", "user_message", "{}", said("More"))  # adopts
    reply = SessionItem.objects.get(role="assistant")
    assert feedback.give.sync(carol, "conv-1", [f"sdk_{reply.pk}"], "positive") == 1
    assert Feedback.objects.get().item_id == reply.pk
