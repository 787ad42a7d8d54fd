"""Recording ratings of replies: one per person per reply, checked, kept on regenerate."""

from __future__ import annotations

import pytest

from django_agent_sessions.exceptions import FeedbackRejected
from django_agent_sessions.models import AgentSession, Feedback, SessionItem
from django_agent_sessions.retention import delete_conversations
from django_agent_sessions.signals import feedback_given
from django_agent_sessions.store import feedback
from django_agent_sessions.store.owned import NotFound
from tests.conftest import assistant_message
from tests.feedback_helpers import a_replied_conversation

pytestmark = pytest.mark.django_db


def test_a_rating_is_tied_to_the_run_and_the_reply_and_can_be_changed():
    rated = a_replied_conversation()
    heard = []
    feedback_given.connect(lambda **kw: heard.append(kw["created"]), weak=False, dispatch_uid="t")
    try:
        first = feedback.give(
            rated.owner, "c-rated", rated.reply_id, rating=-1, tags=["inaccurate"]
        )
        changed = feedback.give(rated.owner, "c-rated", rated.reply_id, rating=1, comment="Fine.")
    finally:
        feedback_given.disconnect(dispatch_uid="t")
    assert first.pk == changed.pk
    row = Feedback.objects.get()
    assert (row.rating, row.comment, row.tag_list) == (1, "Fine.", [])
    assert (row.run_id, row.agent_name, row.item_id) == (rated.run.pk, "Calculator", rated.reply_id)
    assert heard == [True, False]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rating": 0}, "A rating is 1 (good) or -1 (bad), not 0."),
        ({"rating": True}, "A rating is 1 (good) or -1 (bad), not True."),
        ({"tags": ["rude"]}, "Unknown tag 'rude'"),
        ({"comment": "x" * 2001}, "at most 2000 characters"),
        ({"item": "question"}, "is not one of the assistant's replies here"),
        ({"tags": "unsafe"}, "Tags are a list of texts, not str."),
    ],
)
def test_bad_feedback_is_refused_with_the_reason_and_nothing_is_saved(change, message):
    rated = a_replied_conversation()
    user = rated.owner
    item = rated.question_id if change.pop("item", None) else rated.reply_id
    arguments = {"rating": 1, **change}
    with pytest.raises(FeedbackRejected, match=message.replace("(", r"\(").replace(")", r"\)")):
        feedback.give(user, "c-rated", item, **arguments)
    assert not Feedback.objects.exists()


def test_someone_elses_conversation_is_not_found():
    rated = a_replied_conversation()
    bob = type(rated.owner).objects.create_user("bob")
    with pytest.raises(NotFound):
        feedback.give(bob, "c-rated", rated.reply_id, rating=1)
    assert not Feedback.objects.exists()


def test_a_rating_outlives_its_reply_and_goes_with_the_conversation():
    rated = a_replied_conversation()
    feedback.give(rated.owner, "c-rated", rated.reply_id, rating=-1)
    SessionItem.objects.filter(pk=rated.reply_id).delete()  # the turn regenerated
    (record,) = feedback.records(Feedback.objects.all())
    assert record["reply"] == assistant_message("84.")
    delete_conversations([AgentSession.objects.get().pk])
    assert not Feedback.objects.exists()


def test_records_hold_the_conversation_before_the_reply_in_the_sdk_format():
    rated = a_replied_conversation()
    feedback.give(rated.owner, "c-rated", rated.reply_id, rating=-1, tags=["inaccurate"])
    (record,) = feedback.records(Feedback.objects.all())
    assert record["input"] == [{"role": "user", "content": "What is 12 * 7?"}]
    assert (record["rating"], record["tags"], record["agent"]) == (-1, ["inaccurate"], "Calculator")
    assert record["run_id"] == str(rated.run.run_id)
