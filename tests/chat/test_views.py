"""The packaged chat's conversation views: rename, delete, who may use them, CSRF, markup.

Listing, opening and clearing are covered through the example project's URLconf in
example_project/tests/test_views.py; here the app is mounted as the docs say, under ``chat/``.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from django_agent_sessions.models import AgentSession, SessionItem
from tests.chat.helpers import (
    add,
    items_of,
    logged_in,
    url,
)
from tests.conftest import assistant_message, user_message

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bob(make_user):
    return make_user("bob")


def test_urls_are_namespaced_under_the_include():
    assert reverse("django_agent_sessions:chat") == "/chat/"
    assert url("conversation", "x") == "/chat/c/x/"


def test_opening_new_conversations_writes_nothing(alice):
    client = logged_in(alice)
    for _ in range(3):
        page = client.get(client.get("/chat/new/").url)
        assert page.status_code == 200
    assert client.get("/chat/").status_code == 302
    assert AgentSession.objects.count() == 0


def test_rename(alice, bob):
    add("mine", alice, user_message("first"))
    client = logged_in(alice)
    response = client.post(url("rename", "mine"), {"title": "  Trip   to Lisbon "})
    assert response.json() == {"id": "mine", "title": "Trip to Lisbon"}
    assert AgentSession.objects.get(session_id="mine").title == "Trip to Lisbon"
    assert client.post(url("rename", "mine"), {"title": "  "}).status_code == 400
    assert client.post(url("rename", "mine"), {"title": "x" * 256}).status_code == 400
    assert client.get(url("rename", "mine")).status_code == 405

    add("bobs", bob, user_message("bob's"))
    assert client.post(url("rename", "bobs"), {"title": "mine now"}).status_code == 404
    assert client.post(url("rename", "nobody"), {"title": "x"}).status_code == 404
    assert AgentSession.objects.get(session_id="bobs").title == "bob's"


def test_delete(alice, bob):
    add("gone", alice, user_message("one"), assistant_message("two"))
    add("bobs", bob, user_message("bob's"))
    client = logged_in(alice)
    assert client.post(url("delete", "bobs")).status_code == 404
    response = client.post(url("delete", "gone"))
    assert response.status_code == 200
    assert response.json()["next"] == "/chat/new/"
    assert not AgentSession.objects.filter(session_id="gone").exists()
    assert SessionItem.objects.count() == 1  # bob's
    assert client.post(url("delete", "gone")).status_code == 404


def test_others_and_anonymous_get_nothing(alice, bob, client):
    add("bobs", bob, user_message("secret"))
    alices = logged_in(alice)
    assert alices.get(url("conversation", "bobs")).status_code == 404
    assert alices.post(url("rewind", "bobs")).status_code == 404
    assert alices.post(url("clear", "bobs")).status_code == 404
    assert client.post(url("rewind", "bobs")).status_code == 401
    assert client.post(url("delete", "bobs")).status_code == 302  # to the login page
    assert len(items_of("bobs")) == 1


def test_every_unsafe_method_needs_csrf(alice):
    add("csrf", alice, user_message("hello"), assistant_message("hi"))
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    for name in ["rename", "delete", "clear", "rewind"]:
        assert client.post(url(name, "csrf"), {"title": "t"}).status_code == 403, name
    assert len(items_of("csrf")) == 2
    client.get(url("conversation", "csrf"))
    token = client.cookies["csrftoken"].value
    response = client.post(url("rewind", "csrf"), headers={"X-CSRFToken": token})
    assert response.status_code == 200


def test_page_has_the_contract_markup(alice):
    body = logged_in(alice).get(url("conversation", "fresh")).content.decode()
    assert 'role="log"' in body
    assert "<script>" not in body
    assert "style=" not in body
    assert 'data-rewind-url="/chat/c/fresh/rewind/"' in body
    assert _repeated_attributes(body) == []


class _AttributeCounter(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.repeated: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = [name for name, _value in attrs]
        self.repeated += [f"{tag} {name}" for name in set(names) if names.count(name) > 1]


def _repeated_attributes(html: str) -> list[str]:
    """Attributes given twice on one element (a browser silently keeps the first)."""
    counter = _AttributeCounter()
    counter.feed(html)
    return counter.repeated
