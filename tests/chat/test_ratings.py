"""Rating a reply from the page: a JSON POST, under CSRF protection, the owner's only."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from django_agent_sessions.models import Feedback
from tests.feedback_helpers import a_replied_conversation

pytestmark = pytest.mark.django_db


def _url(item_id: int, session_id: str = "c-rated") -> str:
    return reverse("django_agent_sessions:feedback", args=[session_id, item_id])


def test_the_owner_rates_and_changes_a_reply(client):
    rated = a_replied_conversation()
    client.force_login(rated.owner)
    body = {"rating": -1, "comment": "Wrong.", "tags": ["inaccurate"]}
    response = client.post(_url(rated.reply_id), body, content_type="application/json")
    assert response.json() == {
        "item_id": rated.reply_id,
        "rating": -1,
        "comment": "Wrong.",
        "tags": ["inaccurate"],
    }
    client.post(_url(rated.reply_id), {"rating": 1}, content_type="application/json")
    assert Feedback.objects.get().rating == 1


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('{"rating": 2}', "A rating is 1 (good) or -1 (bad), not 2."),
        ("[1]", "The body must be a JSON object."),
        ("not json", "The body must be a JSON object."),
        ('{"rating": 1, "tags": ["rude"]}', "Unknown tag 'rude'"),
    ],
)
def test_bad_bodies_get_400_saying_why(client, body, error):
    rated = a_replied_conversation()
    client.force_login(rated.owner)
    response = client.post(_url(rated.reply_id), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"].startswith(error)


def test_others_get_404_and_a_post_without_the_csrf_token_is_refused():
    rated = a_replied_conversation()
    bob = type(rated.owner).objects.create_user("bob")
    client = Client()
    client.force_login(bob)
    response = client.post(_url(rated.reply_id), {"rating": 1}, content_type="application/json")
    assert response.status_code == 404
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(rated.owner)
    response = strict.post(_url(rated.reply_id), {"rating": 1}, content_type="application/json")
    assert response.status_code == 403
    assert not Feedback.objects.exists()


def _list_url(session_id: str = "c-rated") -> str:
    return reverse("django_agent_sessions:feedback_list", args=[session_id])


def test_the_owner_reads_back_their_ratings_of_the_conversation(client):
    rated = a_replied_conversation()
    client.force_login(rated.owner)
    assert client.get(_list_url()).json() == {"ratings": []}
    body = {"rating": -1, "comment": "Wrong.", "tags": ["unsafe", "inaccurate"]}
    client.post(_url(rated.reply_id), body, content_type="application/json")
    # Another person's rating of the same reply, and a rating in another conversation.
    elsewhere = a_replied_conversation("carol", "c-other")
    client.force_login(elsewhere.owner)
    client.post(_url(elsewhere.reply_id, "c-other"), {"rating": 1}, content_type="application/json")
    client.force_login(rated.owner)
    response = client.get(_list_url())
    assert response.json() == {
        "ratings": [
            {
                "item_id": rated.reply_id,
                "rating": -1,
                "comment": "Wrong.",
                "tags": ["unsafe", "inaccurate"],
            }
        ]
    }


def test_others_get_404_and_anonymous_visitors_the_login_page_as_for_a_post(client):
    rated = a_replied_conversation()
    client.force_login(type(rated.owner).objects.create_user("bob"))
    assert client.get(_list_url()).status_code == 404
    assert client.get(_list_url("c-missing")).status_code == 404
    anonymous = Client()
    for response in (
        anonymous.get(_list_url()),
        anonymous.post(_url(1), {"rating": 1}, content_type="application/json"),
    ):
        assert response.status_code == 302
        assert response["Location"].startswith(settings.LOGIN_URL + "?next=")
    assert client.post(_list_url()).status_code == 405
