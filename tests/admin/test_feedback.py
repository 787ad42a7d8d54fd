"""The feedback admin: filters, and the link to the rated reply in the transcript."""

from __future__ import annotations

import pytest
from django.urls import reverse

from django_agent_sessions.models import Feedback, SessionItem
from django_agent_sessions.store import feedback
from tests.admin.helpers import staff
from tests.feedback_helpers import a_replied_conversation

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:django_agent_sessions_feedback_changelist")


@pytest.fixture
def reviewer(client):
    client.force_login(staff("reviewer", "view_feedback"))
    return client


def test_the_list_filters_by_rating_and_tag(reviewer):
    first = a_replied_conversation("alice", "c-1")
    second = a_replied_conversation("bob", "c-2")
    feedback.give(first.owner, "c-1", first.reply_id, rating=-1, tags=["unsafe"])
    feedback.give(second.owner, "c-2", second.reply_id, rating=1)

    assert "c-1" in reviewer.get(CHANGELIST).text
    bad = reviewer.get(CHANGELIST, {"rating__exact": "-1"}).text
    assert ("c-1" in bad, "c-2" in bad) == (True, False)
    tagged = reviewer.get(CHANGELIST, {"tag": "unsafe"}).text
    assert ("c-1" in tagged, "c-2" in tagged) == (True, False)


def test_a_rating_links_to_its_reply_or_says_it_is_gone(reviewer):
    rated = a_replied_conversation()
    given = feedback.give(rated.owner, "c-rated", rated.reply_id, rating=-1)
    page = reviewer.get(reverse("admin:django_agent_sessions_feedback_change", args=[given.pk]))
    transcript = reverse(
        "admin:django_agent_sessions_agentsession_change", args=[rated.conversation.pk]
    )
    assert f'href="{transcript}?page=1#item-{rated.reply_id}"' in page.text

    SessionItem.objects.filter(pk=rated.reply_id).delete()
    page = reviewer.get(reverse("admin:django_agent_sessions_feedback_change", args=[given.pk]))
    assert "The reply is no longer in the conversation" in page.text
    assert Feedback.objects.count() == 1
