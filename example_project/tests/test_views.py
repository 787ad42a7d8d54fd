"""The example project's HTTP side: chat page, sidebar data, clearing, login, demo user."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem

pytestmark = [pytest.mark.urls("example_project.urls"), pytest.mark.django_db(transaction=True)]


@pytest.fixture
def alice():
    return get_user_model().objects.create_user(username="alice", password="pw-alice")


@pytest.fixture
def client_alice(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def add_messages(session_id: str, owner, *texts: str) -> None:
    session = DjangoSession(session_id, owner=owner)
    async_to_sync(session.add_items)([{"role": "user", "content": text} for text in texts])


def csp_of(response) -> str:
    policy = str(response.headers["Content-Security-Policy"])
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    return policy


def test_anonymous_visitors_are_sent_to_the_login_page(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response.url.startswith("/accounts/login/")

    login = client.get(response.url)
    assert login.status_code == 200
    body = login.content.decode()
    assert '<label for="id_username">' in body
    assert '<label for="id_password">' in body
    assert "script-src 'self'" in csp_of(login)


def test_logging_in_leads_to_a_new_conversation(alice):
    client = Client()
    response = client.post(
        "/accounts/login/", {"username": "alice", "password": "pw-alice"}, follow=True
    )
    assert response.status_code == 200
    final_url = response.redirect_chain[-1][0]
    assert re.fullmatch(r"/c/[0-9a-f]{32}/", final_url)


def test_home_opens_the_latest_conversation(client_alice, alice):
    add_messages("older", alice, "older one")
    add_messages("newer", alice, "newer one")
    assert client_alice.get("/").url == "/c/newer/"
    add_messages("older", alice, "again")
    assert client_alice.get("/").url == "/c/older/"


def test_new_conversation_gets_a_fresh_id_and_writes_nothing(client_alice):
    first = client_alice.get("/new/").url
    second = client_alice.get("/new/").url
    assert first != second
    assert AgentSession.objects.count() == 0


def test_chat_page_is_wired_to_the_websocket_and_the_admin(client_alice, alice):
    add_messages("conv-1", alice, "Plan my trip to Lisbon")
    response = client_alice.get("/c/conv-1/")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'data-socket-path="/ws/agent-sessions/conv-1/"' in body
    assert f'data-clear-url="{reverse("django_agent_sessions:clear", args=["conv-1"])}"' in body
    assert 'href="/admin/"' not in body, "the admin link is for staff only"
    assert 'href="/new/"' in body
    assert '<h1 id="conversation-title">Plan my trip to Lisbon</h1>' in body
    assert '<label for="message" id="message-label">' in body
    assert 'aria-current="page"' in body
    assert "<script>" not in body, "no inline script: the CSP forbids it"
    assert (
        '<script type="module" src="/static/django_agent_sessions/chat/chat.js"></script>' in body
    )

    # The example's own template extends the packaged one.
    assert "calculate (12 + 30) * 2" in body
    assert '<p class="brand">Agent chat</p>' in body
    policy = csp_of(response)
    assert "connect-src 'self' ws://testserver wss://testserver" in policy
    assert "default-src 'none'" in policy


def test_titles_are_escaped(client_alice, alice):
    add_messages("xss", alice, "<script>alert(1)</script>")
    body = client_alice.get("/c/xss/").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_someone_elses_conversation_is_not_found(client_alice):
    bob = get_user_model().objects.create_user(username="bob", password="pw-bob")
    add_messages("bobs", bob, "secret plans")
    response = client_alice.get("/c/bobs/")
    assert response.status_code == 404
    assert b"secret plans" not in response.content
    # Unowned conversations (server-side ones) are not the user's either.
    add_messages("server-side", None, "internal")
    assert client_alice.get("/c/server-side/").status_code == 404


def test_conversation_list_is_the_users_newest_first(client_alice, alice):
    bob = get_user_model().objects.create_user(username="bob", password="pw-bob")
    add_messages("a", alice, "First topic")
    add_messages("b", alice, "Second topic")
    add_messages("bob-1", bob, "Not yours")
    response = client_alice.get("/conversations/")
    data = response.json()["conversations"]
    assert [row["id"] for row in data] == ["b", "a"]
    assert [row["title"] for row in data] == ["Second topic", "First topic"]
    assert data[0]["url"] == "/c/b/"
    assert client_alice.get("/c/a/").status_code == 200


def test_clear_empties_the_conversation_and_keeps_its_title(client_alice, alice):
    add_messages("to-clear", alice, "Keep my title", "second")
    response = client_alice.post("/c/to-clear/clear/")
    assert response.status_code == 200
    assert response.json() == {"cleared": "to-clear"}
    row = AgentSession.objects.get(session_id="to-clear")
    assert row.title == "Keep my title"
    assert row.item_count == 0
    assert not SessionItem.objects.filter(session=row).exists()


def test_clear_refuses_other_users_anonymous_users_and_get(client_alice, client):
    bob = get_user_model().objects.create_user(username="bob", password="pw-bob")
    add_messages("bobs", bob, "bob's")
    assert client_alice.post("/c/bobs/clear/").status_code == 404
    assert client.post("/c/bobs/clear/").status_code == 401
    assert client_alice.get("/c/bobs/clear/").status_code == 405
    assert SessionItem.objects.count() == 1


def test_clear_waits_for_a_live_run(client_alice, alice):
    add_messages("busy", alice, "long story")
    row = AgentSession.objects.get(session_id="busy")
    run = AgentRun.objects.create(
        session=row, lease_expires_at=timezone.now() + timedelta(minutes=1)
    )
    response = client_alice.post("/c/busy/clear/")
    assert response.status_code == 409
    assert response.json()["error"] == "A reply is still being written; stop it first."
    assert SessionItem.objects.filter(session=row).count() == 1

    # A run whose worker died (its lease ran out) does not hold the conversation.
    run.lease_expires_at = timezone.now() - timedelta(seconds=1)
    run.save()
    assert client_alice.post("/c/busy/clear/").status_code == 200
    assert SessionItem.objects.filter(session=row).count() == 0


def test_clear_needs_the_csrf_token(alice):
    add_messages("csrf", alice, "hello")
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post("/c/csrf/clear/").status_code == 403
    client.get("/c/csrf/")  # the page sets the cookie the script sends back as a header
    token = client.cookies["csrftoken"].value
    assert client.post("/c/csrf/clear/", headers={"X-CSRFToken": token}).status_code == 200


def test_overlong_session_ids_are_not_found(client_alice):
    assert client_alice.get("/c/" + "x" * 256 + "/").status_code == 404


def test_page_strings_are_all_present(client_alice):
    body = client_alice.get(f"/c/{uuid.uuid4().hex}/").content.decode()
    strings = re.search(r'<div hidden id="chat-strings"(.*?)></div>', body, re.S)
    assert strings is not None
    scripts = Path(__file__).parents[2] / "django_agent_sessions/static/django_agent_sessions/chat"
    used = set()
    for script in scripts.glob("*.js"):
        used |= set(re.findall(r"strings\.(\w+)", script.read_text()))
    used |= {"connecting", "connected", "reconnecting", "offline"}  # strings[state]
    present = {
        re.sub(r"-(\w)", lambda m: m.group(1).upper(), name)
        for name in re.findall(r"data-([\w-]+)=", strings.group(1))
    }
    assert used <= present, f"missing page strings: {used - present}"


def test_ensure_demo_user_creates_a_superuser_once(capsys):
    call_command("ensure_demo_user")
    assert "Demo login: demo / demo" in capsys.readouterr().out
    user = get_user_model().objects.get(username="demo")
    assert user.is_superuser
    assert user.is_staff
    assert user.check_password("demo")

    user.set_password("changed")
    user.save()
    call_command("ensure_demo_user")
    assert "created earlier" in capsys.readouterr().out
    user.refresh_from_db()
    assert user.check_password("changed")
    assert get_user_model().objects.filter(username="demo").count() == 1


def test_static_files_exist():
    from django.contrib.staticfiles import finders

    for name in [
        "django_agent_sessions/chat/chat.js",
        "django_agent_sessions/chat/chat.css",
        "chat/favicon.svg",
        "chat/login.css",
    ]:
        assert finders.find(name), name


def test_favicon_requests_find_the_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response.url == "/static/chat/favicon.svg"
