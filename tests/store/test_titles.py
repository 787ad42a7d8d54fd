"""``store.titles``: whether a run's end leaves its conversation wanting a title (its
first completed run, titled by its first message), and the compare-and-set that lets a
person's title win."""

from __future__ import annotations

from typing import Any

import pytest
from agents.usage import Usage

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import owned, runs, titles
from tests.conftest import user_message
from tests.store.helpers import user, write

pytestmark = pytest.mark.django_db


def completed(conversation: AgentSession) -> AgentRun:
    run: AgentRun = AgentRun.objects.create(session=conversation, status="completed")
    return run


def wants(conversation: AgentSession, run: AgentRun) -> Any:
    found: Any = titles.with_title_wish(AgentRun.objects.all()).get(pk=run.pk)
    return found.title_from


def test_the_first_completed_run_of_an_untitled_conversation_wants_one() -> None:
    alice = user("alice")
    conversation = write("c", user_message("Plan a trip to Lisbon"), owner_id=alice.pk)
    AgentRun.objects.create(session=conversation, status="failed")  # not an exchange
    first = completed(conversation)
    assert wants(conversation, first) == "Plan a trip to Lisbon"
    second = completed(conversation)
    assert wants(conversation, second) is None
    assert wants(conversation, AgentRun.objects.create(session=conversation)) is None  # running


def test_a_conversation_without_a_user_message_wants_one_from_the_reply_alone() -> None:
    conversation = write("c", {"role": "assistant", "content": "Hello"})
    assert wants(conversation, completed(conversation)) == ""


def test_the_end_record_says_whether_a_title_is_wanted() -> None:
    conversation = write("c", user_message("Plan a trip to Lisbon"))
    run = AgentRun.objects.create(session=conversation, status="running")
    ended = runs.finish.sync(run.pk, status="completed", usage=Usage(), session_pk=conversation.pk)
    assert getattr(ended, "title_from", None) == "Plan a trip to Lisbon"


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
