"""``store.queued``: a conversation's queued messages kept in order, edited and removed
by their owner only, and taken once, in the transaction that records their run."""

from __future__ import annotations

import pytest
from agents.usage import Usage

from django_agent_sessions.models import AgentRun, QueuedMessage
from django_agent_sessions.store import queued, runs
from tests.conftest import user_message
from tests.store.helpers import user, write

pytestmark = pytest.mark.django_db


def texts(session_pk: int) -> list[str]:
    return [message.text for message in queued.listing.sync(session_pk)]


def test_messages_are_kept_in_order_with_their_client_ids(session_id: str) -> None:
    alice = user("alice")
    conversation = write(session_id, user_message("hi"), owner_id=alice.pk)
    queued.keep.sync(conversation.pk, alice.pk, "One", "c-1")
    waiting = queued.keep.sync(conversation.pk, alice.pk, "Two", "c-2")
    assert waiting is not None
    assert [(m.text, m.client_id) for m in waiting] == [("One", "c-1"), ("Two", "c-2")]
    assert waiting[0].wire()["id"] == waiting[0].pk
    following = queued.next_message.sync(conversation.pk)
    assert following is not None
    assert (following.message.text, following.session_id) == ("One", session_id)
    assert following.owner == alice


def test_a_full_queue_refuses_one_more(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    for number in range(queued.MAX_QUEUED):
        assert queued.keep.sync(conversation.pk, None, f"m{number}", "") is not None
    assert queued.keep.sync(conversation.pk, None, "one too many", "") is None


def test_only_the_owner_edits_or_removes(session_id: str) -> None:
    alice, mallory = user("alice"), user("mallory")
    conversation = write(session_id, user_message("hi"), owner_id=alice.pk)
    [message] = queued.keep.sync(conversation.pk, alice.pk, "Tpyo", "") or []
    assert queued.edit.sync(conversation.pk, mallory.pk, message.pk, "Mine") is None
    assert queued.remove.sync(conversation.pk, mallory.pk, message.pk) is None
    other = write(f"{session_id}-other", user_message("hi"), owner_id=alice.pk)
    assert queued.edit.sync(other.pk, alice.pk, message.pk, "Elsewhere") is None
    assert texts(conversation.pk) == ["Tpyo"]
    edited = queued.edit.sync(conversation.pk, alice.pk, message.pk, "Typo")
    assert [m.text for m in edited or []] == ["Typo"]
    assert queued.remove.sync(conversation.pk, alice.pk, message.pk) == []
    assert queued.remove.sync(conversation.pk, alice.pk, message.pk) is None  # gone


def test_taking_deletes_the_message_with_its_run_once(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    [message] = queued.keep.sync(conversation.pk, None, "Next", "c-1") or []
    started = runs.start.sync(
        conversation.pk,
        agent_name="A",
        lease_seconds=60,
        client_id="c-1",
        order=queued.Taking(message.pk),
    )
    assert started is not None
    assert not QueuedMessage.objects.exists()
    runs.finish.sync(started.pk, status="completed", usage=Usage(), session_pk=conversation.pk)
    # A second taker (another worker saw the same end): the row is gone, no run is recorded.
    again = runs.start.sync(
        conversation.pk, agent_name="A", lease_seconds=60, order=queued.Taking(message.pk)
    )
    assert again is None
    assert AgentRun.objects.filter(session=conversation).count() == 1


def test_a_held_conversation_takes_nothing(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    assert runs.start.sync(conversation.pk, agent_name="A", lease_seconds=60) is not None
    [message] = queued.keep.sync(conversation.pk, None, "Next", "") or []
    taken = runs.start.sync(
        conversation.pk, agent_name="A", lease_seconds=60, order=queued.Taking(message.pk)
    )
    assert taken is None
    assert texts(conversation.pk) == ["Next"]  # still queued: sent at the run's end
    assert queued.drop.sync(message.pk) is True
    assert queued.drop.sync(message.pk) is False
