"""Taking back the last turn in the packaged chat (edit and regenerate), and what it leaves.

The whole turn goes, or none of it; a stopped reply shown for the turn goes with it, and an
automatic title follows the edited first message.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError, connection
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from tests.chat.helpers import (
    add,
    items_of,
    logged_in,
    url,
)
from tests.conftest import assistant_message, user_message

pytestmark = pytest.mark.django_db(transaction=True)


def test_delete_and_rewind_wait_for_a_live_run(alice):
    add("busy", alice, user_message("one"), assistant_message("two"))
    row = AgentSession.objects.get(session_id="busy")
    AgentRun.objects.create(session=row, lease_expires_at=timezone.now() + timedelta(minutes=1))
    client = logged_in(alice)
    assert client.post(url("delete", "busy")).status_code == 409
    assert client.post(url("rewind", "busy")).status_code == 409
    assert len(items_of("busy")) == 2


def test_rewind_takes_back_exactly_the_last_turn(alice):
    call = {"type": "function_call", "call_id": "c1", "name": "clock", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "12:00"}
    add(
        "turns",
        alice,
        user_message("hi"),
        assistant_message("hello"),
        user_message("time?"),
        call,
        output,
    )
    add("turns", alice, assistant_message("It is noon."))
    client = logged_in(alice)
    response = client.post(url("rewind", "turns"))
    assert response.json() == {"text": "time?", "removed": 4}
    # What the model sees next: the first turn, then whatever the page sends again.
    assert items_of("turns") == [user_message("hi"), assistant_message("hello")]

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
    add(
        "halfway",
        alice,
        user_message("hi"),
        user_message("time?"),
        assistant_message("keep this"),
        assistant_message("noon"),
    )
    with pytest.raises(DatabaseError):
        logged_in(alice).post(url("rewind", "halfway"))
    assert len(items_of("halfway")) == 4
    assert AgentSession.objects.get(session_id="halfway").item_count == 4


def test_rewind_reads_structured_user_content(alice):
    add("parts", alice, {"role": "user", "content": [{"type": "input_text", "text": "a b"}]})
    assert logged_in(alice).post(url("rewind", "parts")).json()["text"] == "a b"


def shown_history(session_id: str) -> list[tuple[str, str, str]]:
    """The history frame's items as the page shows them: (role, text, status)."""
    from django_agent_sessions.store.conversations import read_history
    from django_agent_sessions.streaming.wire.encoding import history_items

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
    add("stopped", alice, user_message("hi"), assistant_message("hello"))
    ended_run("stopped", "", status="completed")
    add("stopped", alice, user_message("the same question"))
    ended_run("stopped", "Once upon a time")
    assert shown_history("stopped")[-1] == ("assistant", "Once upon a time", "cancelled")

    client = logged_in(alice)
    assert client.post(url("rewind", "stopped")).json()["text"] == "the same question"
    add("stopped", alice, user_message(again), assistant_message("answered"))
    assert shown_history("stopped") == [
        ("user", "hi", ""),
        ("assistant", "hello", ""),
        ("user", again, ""),
        ("assistant", "answered", ""),
    ]


def test_clear_takes_back_every_stopped_reply(alice):
    add("cleared", alice, user_message("tell me a story"))
    ended_run("cleared", "Once upon a time")
    client = logged_in(alice)
    assert client.post(url("clear", "cleared")).status_code == 200
    assert shown_history("cleared") == []
    add("cleared", alice, user_message("hello"))
    assert shown_history("cleared") == [("user", "hello", "")]


def test_an_automatic_title_follows_an_edited_first_message(alice):
    add("titled", alice, user_message("tell me a long story"))
    assert AgentSession.objects.get(session_id="titled").title == "tell me a long story"
    client = logged_in(alice)
    client.post(url("rewind", "titled"))
    add("titled", alice, user_message("hello"))
    assert AgentSession.objects.get(session_id="titled").title == "hello"

    # A later turn taken back leaves the title of the first message alone.
    add("titled", alice, assistant_message("hi"), user_message("second"))
    client.post(url("rewind", "titled"))
    assert AgentSession.objects.get(session_id="titled").title == "hello"


def test_a_title_the_user_set_stays_when_the_first_message_is_edited(alice):
    add("renamed", alice, user_message("tell me a long story"))
    client = logged_in(alice)
    assert client.post(url("rename", "renamed"), {"title": "Stories"}).status_code == 200
    client.post(url("rewind", "renamed"))
    add("renamed", alice, user_message("hello"))
    assert AgentSession.objects.get(session_id="renamed").title == "Stories"
