"""``with_item_ids``: a run names only the messages inside its own window of items
(after ``history_item_id``, up to ``last_item_id``): the person's first message there
and the newest reply, never those of the run before or after it."""

from __future__ import annotations

import pytest

from django_agent_sessions.models import AgentRun
from django_agent_sessions.store.run_items import with_item_ids
from tests.conftest import assistant_message, user_message
from tests.store.helpers import item_ids, write

pytestmark = pytest.mark.django_db


def test_a_run_names_the_message_it_answered_and_its_newest_reply(session_id: str) -> None:
    conversation = write(
        session_id,
        user_message("before"),
        assistant_message("old reply"),
        user_message("asked"),
        assistant_message("first part"),
        assistant_message("newest reply"),
        user_message("the next run's"),
        assistant_message("the next run's reply"),
    )
    ids = item_ids(session_id)
    run = AgentRun.objects.create(session=conversation, history_item_id=ids[1], last_item_id=ids[4])
    named = with_item_ids(AgentRun.objects.filter(pk=run.pk)).get()
    assert (named.user_item_id, named.reply_item_id) == (ids[2], ids[4])  # type: ignore[attr-defined]


def test_a_run_without_messages_names_none(session_id: str) -> None:
    conversation = write(session_id, user_message("before"))
    newest = item_ids(session_id)[-1]
    run = AgentRun.objects.create(session=conversation, history_item_id=newest, last_item_id=newest)
    named = with_item_ids(AgentRun.objects.filter(pk=run.pk)).get()
    assert (named.user_item_id, named.reply_item_id) == (None, None)  # type: ignore[attr-defined]
