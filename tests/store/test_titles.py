"""``store.titles``: whether a conversation wants a title now (its first completed run,
titled by its first message), and the compare-and-set that lets a person's title win."""

from __future__ import annotations

from typing import Any

import pytest

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import owned, titles
from tests.conftest import user_message
from tests.store.helpers import user, write

pytestmark = pytest.mark.django_db


def completed(conversation: AgentSession) -> AgentRun:
    run: AgentRun = AgentRun.objects.create(session=conversation, status="completed")
    return run


def wants(conversation: AgentSession, run: AgentRun) -> Any:
    return titles.untitled_first_message.sync(conversation.pk, run.pk)


def test_the_first_completed_run_of_an_untitled_conversation_wants_one() -> None:
    alice = user("alice")
    conversation = write("c", user_message("Plan a trip to Lisbon"), owner_id=alice.pk)
    AgentRun.objects.create(session=conversation, status="failed")  # not an exchange
    first = completed(conversation)
    assert wants(conversation, first) == "Plan a trip to Lisbon"
    second = completed(conversation)
    assert wants(conversation, second) is None


def test_the_compare_and_set_writes_once_and_never_over_a_persons_title() -> None:
    alice = user("alice")
    conversation = write("c", user_message("Hi"), owner_id=alice.pk)
    run = completed(conversation)
    assert titles.write.sync(conversation.pk, "Greetings") is True
    assert titles.write.sync(conversation.pk, "Again") is False
    conversation.refresh_from_db()
    assert (conversation.title, conversation.title_source) == ("Greetings", "model")
    assert wants(conversation, run) is None  # titled
    owned.rename("c", alice, "Mine")
    assert titles.write.sync(conversation.pk, "Model's") is False
    conversation.refresh_from_db()
    assert (conversation.title, conversation.title_source) == ("Mine", "person")


def test_a_renamed_conversation_wants_no_title() -> None:
    alice = user("alice")
    conversation = write("c", user_message("Hi"), owner_id=alice.pk)
    owned.rename("c", alice, "Named")
    assert wants(conversation, completed(conversation)) is None
    assert titles.write.sync(conversation.pk, "Model's") is False
