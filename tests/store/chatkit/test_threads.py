"""A ChatKit thread is its owner's conversation: created by saving, listed in creation
order with the owner's other conversations, found by nobody else, deleted with
everything of the conversation."""

from __future__ import annotations

import pytest

from django_agent_sessions.models import AgentSession, ChatKitThread
from django_agent_sessions.store.chatkit import Missing, threads

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice")


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob")


def _loaded(owner, thread_id) -> tuple:
    found = threads.load.sync(owner.pk, thread_id)
    return found.payload, found.renamed


def _page(owner_id, after, limit, order) -> tuple[list, bool]:
    found = threads.page.sync(owner_id, after, limit, order)
    return [thread.thread_id for thread in found.threads], found.has_more


def test_saving_creates_the_owners_conversation_and_keeps_the_payload(alice):
    threads.save.sync(alice.pk, "thr_1", '{"title": "Weather"}', "Weather")
    conversation = AgentSession.objects.get(session_id="thr_1")
    assert (conversation.owner_id, conversation.title) == (alice.pk, "Weather")
    assert _loaded(alice, "thr_1") == ('{"title": "Weather"}', None)

    threads.save.sync(alice.pk, "thr_1", '{"title": "Sun"}', "Sun")
    assert _loaded(alice, "thr_1") == ('{"title": "Sun"}', None)
    assert ChatKitThread.objects.count() == 1


def test_a_rename_elsewhere_is_the_threads_title(alice):
    threads.save.sync(alice.pk, "thr_1", '{"title": null}', "")
    assert _loaded(alice, "thr_1") == ('{"title": null}', None)
    AgentSession.objects.update(title="Renamed in the chat")
    assert _loaded(alice, "thr_1") == ('{"title": null}', "Renamed in the chat")


def test_someone_elses_conversation_is_missing_for_every_operation(alice, bob):
    threads.save.sync(alice.pk, "thr_1", "{}", "")
    with pytest.raises(Missing):
        threads.save.sync(bob.pk, "thr_1", '{"stolen": true}', "")
    with pytest.raises(Missing):
        threads.load.sync(bob.pk, "thr_1")
    with pytest.raises(Missing):
        threads.save.sync(None, "thr_2", "{}", "")  # nobody owns nothing
    threads.delete.sync(bob.pk, "thr_1")
    assert _loaded(alice, "thr_1") == ("{}", None)
    assert _page(bob.pk, None, 10, "asc") == ([], False)
    AgentSession.objects.create(session_id="server-made")  # no owner
    assert _page(None, None, 10, "asc") == ([], False)


def test_a_conversation_of_the_packaged_chat_is_a_thread_before_and_after_saving(alice):
    AgentSession.objects.create(session_id="conv-1", owner=alice, title="Chat")
    found = threads.load.sync(alice.pk, "conv-1")
    assert (found.payload, found.renamed, found.title) == (None, None, "Chat")
    assert _page(alice.pk, None, 10, "asc") == (["conv-1"], False)
    threads.save.sync(alice.pk, "conv-1", '{"title": "Chat"}', "Chat")
    assert AgentSession.objects.count() == 1
    assert _loaded(alice, "conv-1") == ('{"title": "Chat"}', None)


def test_threads_page_in_creation_order_either_way(alice):
    for n in range(1, 4):
        threads.save.sync(alice.pk, f"thr_{n}", "{}", "")
    assert _page(alice.pk, None, 2, "asc") == (["thr_1", "thr_2"], True)
    assert _page(alice.pk, "thr_2", 2, "asc") == (["thr_3"], False)
    assert _page(alice.pk, None, 2, "desc") == (["thr_3", "thr_2"], True)
    assert _page(alice.pk, "thr_2", 2, "desc") == (["thr_1"], False)
    with pytest.raises(Missing):
        threads.page.sync(alice.pk, "thr_9", 2, "asc")


def test_deleting_a_thread_deletes_its_conversation(alice):
    threads.save.sync(alice.pk, "thr_1", "{}", "")
    threads.delete.sync(alice.pk, "thr_1")
    assert not AgentSession.objects.exists()
    assert not ChatKitThread.objects.exists()
