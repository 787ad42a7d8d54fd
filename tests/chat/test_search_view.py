"""The sidebar's search view (GET search/?q=): the signed-in person's conversations only,
snippets as text with the matches marked, links to the matching message."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from django_agent_sessions.models import SessionItem
from tests.chat.helpers import add, logged_in, url
from tests.conftest import assistant_message, user_message

pytestmark = pytest.mark.django_db(transaction=True)


def search(client: Client, query: str) -> list[dict]:
    response = client.get(reverse("django_agent_sessions:search"), {"q": query})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    results: list[dict] = response.json()["results"]
    return results


def test_a_person_finds_their_messages_and_never_anyone_elses(alice, make_user):
    bob = make_user("bob")
    add("alice-trip", alice, user_message("Book <b>Lisbon</b> trains"), assistant_message("Done"))
    add("bob-trip", bob, user_message("Lisbon trains for me too"))
    title, hit = search(logged_in(alice), "lisbon")  # titled after its first message
    item_id = SessionItem.objects.filter(session__session_id="alice-trip").order_by("id")[0].pk
    assert (title["item_id"], title["url"]) == (None, url("conversation", "alice-trip"))
    assert hit["session_id"] == "alice-trip"
    assert hit["item_id"] == item_id
    assert hit["url"] == url("conversation", "alice-trip") + f"#item-{item_id}"
    # Plain text: the page shows it with text nodes, the match in a <mark>.
    assert hit["snippet"] == [["Book <b>", False], ["Lisbon", True], ["</b> trains", False]]
    assert {h["session_id"] for h in search(logged_in(bob), "lisbon trains")} == {"bob-trip"}


def test_titles_are_found_and_an_empty_query_finds_nothing(alice):
    add("named", alice, user_message("Hello"))
    logged = logged_in(alice)
    logged.post(url("rename", "named"), {"title": "Quarterly numbers"})
    assert [(h["session_id"], h["item_id"]) for h in search(logged, "quarterly")] == [
        ("named", None)
    ]
    assert search(logged, "") == []
    assert search(logged, "x" * 5000) == []


def test_only_signed_in_people_search(alice):
    response = Client().get(reverse("django_agent_sessions:search"), {"q": "x"})
    assert response.status_code == 302
    assert logged_in(alice).post(reverse("django_agent_sessions:search")).status_code == 405


def test_the_page_has_the_box_for_people_signed_in(alice):
    page = logged_in(alice).get(url("conversation", "page")).content.decode()
    assert 'id="search-input"' in page
    assert 'role="search"' in page
    assert "chat/search.js" in page
