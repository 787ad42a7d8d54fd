"""The feedback admin: filters, and the link to the rated reply in the transcript."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

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


def _filter_link(page: str, label: str) -> str:
    """The query of the list filter's link named ``label``, as a reviewer clicks it."""
    found = re.search(rf'<a href="(\?[^"]*)"[^>]*>{re.escape(label)}</a>', page)
    assert found, f"no filter link {label!r}"
    return html.unescape(found.group(1))


def test_the_list_filters_by_agent_and_by_date(reviewer):
    calculator = a_replied_conversation("alice", "c-sums")
    poet = a_replied_conversation("bob", "c-verse")
    poet.run.agent_name = "Poet"
    poet.run.save(update_fields=["agent_name"])
    feedback.give(calculator.owner, "c-sums", calculator.reply_id, rating=1)
    old = feedback.give(poet.owner, "c-verse", poet.reply_id, rating=-1)
    Feedback.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(days=40))

    listed = reviewer.get(CHANGELIST).text
    assert ("c-sums" in listed, "c-verse" in listed) == (True, True)
    by_agent = reviewer.get(CHANGELIST + _filter_link(listed, "Poet")).text
    assert ("c-sums" in by_agent, "c-verse" in by_agent) == (False, True)
    by_agent = reviewer.get(CHANGELIST + _filter_link(listed, "Calculator")).text
    assert ("c-sums" in by_agent, "c-verse" in by_agent) == (True, False)
    recent = reviewer.get(CHANGELIST + _filter_link(listed, "Past 7 days")).text
    assert ("c-sums" in recent, "c-verse" in recent) == (True, False)
    this_month = reviewer.get(CHANGELIST + _filter_link(listed, "This month")).text
    assert "c-verse" not in this_month
    # The date hierarchy above the list reaches the old rating by its year and month.
    then = timezone.localtime(timezone.now() - timedelta(days=40))
    month = reviewer.get(
        CHANGELIST, {"updated_at__year": then.year, "updated_at__month": then.month}
    ).text
    assert "c-verse" in month
