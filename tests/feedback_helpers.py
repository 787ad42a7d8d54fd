"""A rated conversation for the feedback tests: a user's question, a run, its reply."""

from __future__ import annotations

from typing import Any, NamedTuple

from django.contrib.auth.models import User

from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from tests.conftest import assistant_message, user_message
from tests.conversations import make_conversation


class Rated(NamedTuple):
    owner: User
    conversation: AgentSession
    run: AgentRun
    question_id: int
    reply_id: int


def a_replied_conversation(username: str = "alice", session_id: str = "c-rated") -> Rated:
    owner = User.objects.create_user(username)
    items: list[Any] = [user_message("What is 12 * 7?"), assistant_message("84.")]
    conversation = make_conversation(session_id, items, owner=owner)
    question_id, reply_id = (
        SessionItem.objects.filter(session=conversation).order_by("id").values_list("id", flat=True)
    )
    run = AgentRun.objects.create(
        session=conversation,
        status=AgentRun.Status.COMPLETED,
        agent_name="Calculator",
        history_item_id=question_id - 1,
        last_item_id=reply_id,
    )
    return Rated(owner, conversation, run, question_id, reply_id)
