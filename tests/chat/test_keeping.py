"""The sidebar's keeping (POST c/<id>/keep/, GET conversations/ and search/ with
``archived`` and ``agent``): only the owner's, under CSRF, as the store says."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from django_agent_sessions.models import AgentRun, AgentSession
from tests.chat.helpers import add, logged_in, url
from tests.conftest import user_message

pytestmark = pytest.mark.django_db


def listed(client: Client, **query: str) -> list[tuple[str, bool, bool]]:
    response = client.get(reverse("django_agent_sessions:list"), query)
    assert response.status_code == 200
    return [(row["id"], row["pinned"], row["archived"]) for row in response.json()["conversations"]]


def test_pin_archive_and_show_archived(alice):
    add("first", alice, user_message("First"))
    add("second", alice, user_message("Second"))
    client = logged_in(alice)
    answer = client.post(url("keep", "first"), {"pinned": "1"})
    assert answer.json() == {"id": "first", "pinned": True, "archived": None}
    assert listed(client) == [("first", True, False), ("second", False, False)]
    assert client.post(url("keep", "second"), {"archived": "1"}).status_code == 200
    assert listed(client) == [("first", True, False)]
    assert listed(client, archived="1") == [("first", True, False), ("second", False, True)]
    search = reverse("django_agent_sessions:search")
    assert client.get(search, {"q": "second"}).json()["results"] == []
    found = client.get(search, {"q": "second", "archived": "1"}).json()["results"]
    assert {hit["session_id"] for hit in found} == {"second"}
    assert client.post(url("keep", "second"), {"archived": "0"}).status_code == 200
    assert [row[0] for row in listed(client)] == ["first", "second"]


def test_the_agent_filter_and_its_choices(alice):
    add("talk", alice, user_message("Hi"))
    add("other", alice, user_message("Hi"))
    talk = AgentSession.objects.get(session_id="talk")
    AgentRun.objects.create(session=talk, agent_name="Helper", status="completed")
    client = logged_in(alice)
    answer = client.get(reverse("django_agent_sessions:list"), {"agent": "Helper"}).json()
    assert [row["id"] for row in answer["conversations"]] == ["talk"]
    assert answer["agents"] == ["Helper"]
    page = client.get(url("conversation", "talk"))
    assert b'<option value="Helper">' in page.content


def test_each_listed_conversations_buttons_are_named_with_its_title(alice):
    """A screen reader's list of buttons says whose Pin and Archive each is."""
    add("lisbon", alice, user_message("Hi"))
    AgentSession.objects.filter(session_id="lisbon").update(title="Weather <Lisbon>")
    page = logged_in(alice).get(url("conversation", "lisbon")).content.decode()
    assert 'aria-label="Pin Weather &lt;Lisbon&gt;"' in page
    assert 'aria-label="Archive Weather &lt;Lisbon&gt;"' in page
    # The page's own strings, for the buttons the sidebar draws: the title filled in.
    assert 'data-pin-named="Pin {title}"' in page
    assert 'data-archive-named="Archive {title}"' in page


def test_only_the_owner_keeps_and_values_are_checked(alice, make_user):
    add("hers", alice, user_message("Hi"))
    bob = logged_in(make_user("bob"))
    assert bob.post(url("keep", "hers"), {"pinned": "1"}).status_code == 404
    assert logged_in(alice).post(url("keep", "hers"), {"pinned": "yes"}).status_code == 400
    assert Client().post(url("keep", "hers"), {"pinned": "1"}).status_code == 302  # log in
    assert logged_in(alice).get(url("keep", "hers")).status_code == 405
    assert not AgentSession.objects.get(session_id="hers").pinned


def test_keeping_needs_the_csrf_token(alice):
    add("hers", alice, user_message("Hi"))
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(alice)
    assert strict.post(url("keep", "hers"), {"pinned": "1"}).status_code == 403
    assert not AgentSession.objects.get(session_id="hers").pinned
