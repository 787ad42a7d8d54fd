"""The packaged chat's conversation management: rename, delete, rewind (edit/regenerate).

Listing, opening and clearing are covered through the example project's URLconf in
example_project/tests/test_views.py; here the app is mounted as the docs say, under ``chat/``.
"""

from __future__ import annotations

from datetime import timedelta
from html.parser import HTMLParser

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alice():
    return get_user_model().objects.create_user(username="alice", password="pw-alice")


@pytest.fixture
def bob():
    return get_user_model().objects.create_user(username="bob", password="pw-bob")


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def add(session_id: str, owner, *items) -> None:
    async_to_sync(DjangoSession(session_id, owner=owner).add_items)(list(items))


def items_of(session_id: str) -> list:
    return async_to_sync(DjangoSession(session_id).get_items)()


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "id": "msg_1",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def url(name: str, session_id: str) -> str:
    return reverse(f"django_agent_sessions:{name}", args=[session_id])


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
    add("mine", alice, user("first"))
    client = logged_in(alice)
    response = client.post(url("rename", "mine"), {"title": "  Trip   to Lisbon "})
    assert response.json() == {"id": "mine", "title": "Trip to Lisbon"}
    assert AgentSession.objects.get(session_id="mine").title == "Trip to Lisbon"
    assert client.post(url("rename", "mine"), {"title": "  "}).status_code == 400
    assert client.post(url("rename", "mine"), {"title": "x" * 256}).status_code == 400
    assert client.get(url("rename", "mine")).status_code == 405

    add("bobs", bob, user("bob's"))
    assert client.post(url("rename", "bobs"), {"title": "mine now"}).status_code == 404
    assert client.post(url("rename", "nobody"), {"title": "x"}).status_code == 404
    assert AgentSession.objects.get(session_id="bobs").title == "bob's"


def test_delete(alice, bob):
    add("gone", alice, user("one"), assistant("two"))
    add("bobs", bob, user("bob's"))
    client = logged_in(alice)
    assert client.post(url("delete", "bobs")).status_code == 404
    response = client.post(url("delete", "gone"))
    assert response.status_code == 200
    assert response.json()["next"] == "/chat/new/"
    assert not AgentSession.objects.filter(session_id="gone").exists()
    assert SessionItem.objects.count() == 1  # bob's
    assert client.post(url("delete", "gone")).status_code == 404


def test_delete_and_rewind_wait_for_a_live_run(alice):
    add("busy", alice, user("one"), assistant("two"))
    row = AgentSession.objects.get(session_id="busy")
    AgentRun.objects.create(session=row, lease_expires_at=timezone.now() + timedelta(minutes=1))
    client = logged_in(alice)
    assert client.post(url("delete", "busy")).status_code == 409
    assert client.post(url("rewind", "busy")).status_code == 409
    assert len(items_of("busy")) == 2


def test_rewind_takes_back_exactly_the_last_turn(alice):
    call = {"type": "function_call", "call_id": "c1", "name": "clock", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "12:00"}
    add("turns", alice, user("hi"), assistant("hello"), user("time?"), call, output)
    add("turns", alice, assistant("It is noon."))
    client = logged_in(alice)
    response = client.post(url("rewind", "turns"))
    assert response.json() == {"text": "time?", "removed": 4}
    # What the model sees next: the first turn, then whatever the page sends again.
    assert items_of("turns") == [user("hi"), assistant("hello")]

    assert client.post(url("rewind", "turns")).json()["text"] == "hi"
    assert items_of("turns") == []
    assert client.post(url("rewind", "turns")).status_code == 409


@pytest.fixture
def undeletable_items():
    """A trigger that refuses to delete an item whose payload mentions "keep"."""
    table = SessionItem._meta.db_table
    if connection.vendor == "postgresql":
        create = [
            "CREATE FUNCTION refuse_keep() RETURNS trigger AS $$ BEGIN "
            "IF OLD.payload LIKE '%keep%' THEN RAISE EXCEPTION 'kept'; END IF; "
            "RETURN OLD; END $$ LANGUAGE plpgsql",
            f"CREATE TRIGGER refuse_keep BEFORE DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION refuse_keep()",
        ]
        drop = [f"DROP TRIGGER refuse_keep ON {table}", "DROP FUNCTION refuse_keep()"]
    else:
        create = [
            f"CREATE TRIGGER refuse_keep BEFORE DELETE ON {table} "
            "WHEN old.payload LIKE '%keep%' BEGIN SELECT RAISE(ABORT, 'kept'); END"
        ]
        drop = ["DROP TRIGGER refuse_keep"]
    with connection.cursor() as cursor:
        for sql in create:
            cursor.execute(sql)
    yield
    with connection.cursor() as cursor:
        for sql in drop:
            cursor.execute(sql)


def test_a_rewind_that_fails_midway_takes_back_nothing(alice, undeletable_items):
    add("halfway", alice, user("hi"), user("time?"), assistant("keep this"), assistant("noon"))
    with pytest.raises(DatabaseError):
        logged_in(alice).post(url("rewind", "halfway"))
    assert len(items_of("halfway")) == 4
    assert AgentSession.objects.get(session_id="halfway").item_count == 4


def test_rewind_reads_structured_user_content(alice):
    add("parts", alice, {"role": "user", "content": [{"type": "input_text", "text": "a b"}]})
    assert logged_in(alice).post(url("rewind", "parts")).json()["text"] == "a b"


def test_others_and_anonymous_get_nothing(alice, bob, client):
    add("bobs", bob, user("secret"))
    alices = logged_in(alice)
    assert alices.get(url("conversation", "bobs")).status_code == 404
    assert alices.post(url("rewind", "bobs")).status_code == 404
    assert alices.post(url("clear", "bobs")).status_code == 404
    assert client.post(url("rewind", "bobs")).status_code == 401
    assert client.post(url("delete", "bobs")).status_code == 302  # to the login page
    assert len(items_of("bobs")) == 1


def test_every_unsafe_method_needs_csrf(alice):
    add("csrf", alice, user("hello"), assistant("hi"))
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


def shown_history(session_id: str) -> list[tuple[str, str, str]]:
    """The history frame's items as the page shows them: (role, text, status)."""
    from django_agent_sessions.store.conversations import read_history
    from django_agent_sessions.websocket.wire import history_items

    pk = AgentSession.objects.get(session_id=session_id).pk
    history = read_history(pk, up_to_item_id=None, limit=100)
    return [
        (item.get("role", item["kind"]), item.get("text", ""), item.get("status", ""))
        for item in history_items(history.entries, history.runs)
    ]


def ended_run(session_id: str, partial_text: str, status: str = "cancelled") -> AgentRun:
    """A run that stored the conversation's newest items so far, then ended."""
    row = AgentSession.objects.get(session_id=session_id)
    ids = list(SessionItem.objects.filter(session=row).values_list("id", flat=True))
    earlier = AgentRun.objects.filter(session=row).values_list("last_item_id", flat=True)
    return AgentRun.objects.create(
        session=row,
        status=status,
        history_item_id=max(earlier, default=0),
        last_item_id=max(ids),
        partial_text=partial_text,
        finished_at=timezone.now(),
    )


@pytest.mark.parametrize("again", ["edited", "the same question"])
def test_rewind_takes_back_the_stopped_reply_shown_for_the_turn(alice, again):
    add("stopped", alice, user("hi"), assistant("hello"))
    ended_run("stopped", "", status="completed")
    add("stopped", alice, user("the same question"))
    ended_run("stopped", "Once upon a time")
    assert shown_history("stopped")[-1] == ("assistant", "Once upon a time", "cancelled")

    client = logged_in(alice)
    assert client.post(url("rewind", "stopped")).json()["text"] == "the same question"
    add("stopped", alice, user(again), assistant("answered"))
    assert shown_history("stopped") == [
        ("user", "hi", ""),
        ("assistant", "hello", ""),
        ("user", again, ""),
        ("assistant", "answered", ""),
    ]


def test_clear_takes_back_every_stopped_reply(alice):
    add("cleared", alice, user("tell me a story"))
    ended_run("cleared", "Once upon a time")
    client = logged_in(alice)
    assert client.post(url("clear", "cleared")).status_code == 200
    assert shown_history("cleared") == []
    add("cleared", alice, user("hello"))
    assert shown_history("cleared") == [("user", "hello", "")]


def test_an_automatic_title_follows_an_edited_first_message(alice):
    add("titled", alice, user("tell me a long story"))
    assert AgentSession.objects.get(session_id="titled").title == "tell me a long story"
    client = logged_in(alice)
    client.post(url("rewind", "titled"))
    add("titled", alice, user("hello"))
    assert AgentSession.objects.get(session_id="titled").title == "hello"

    # A later turn taken back leaves the title of the first message alone.
    add("titled", alice, assistant("hi"), user("second"))
    client.post(url("rewind", "titled"))
    assert AgentSession.objects.get(session_id="titled").title == "hello"


def test_a_title_the_user_set_stays_when_the_first_message_is_edited(alice):
    add("renamed", alice, user("tell me a long story"))
    client = logged_in(alice)
    assert client.post(url("rename", "renamed"), {"title": "Stories"}).status_code == 200
    client.post(url("rewind", "renamed"))
    add("renamed", alice, user("hello"))
    assert AgentSession.objects.get(session_id="renamed").title == "Stories"
