"""``store.conversations``: opening and finding a conversation for a socket, reading its
history in bounded pages with the runs it holds, and locking and emptying many at once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import conversations
from tests.conftest import assistant_message, user_message
from tests.store.helpers import call, item_ids, output, start, user, write

pytestmark = pytest.mark.django_db


def test_open_conversation_creates_it_once_for_its_owner(session_id: str) -> None:
    alice, bob = user("alice"), user("bob")
    opened = conversations.open_conversation(session_id, owner_id=alice.pk)
    assert opened.created
    assert AgentSession.objects.get(pk=opened.pk).owner_id == alice.pk
    again = conversations.open_conversation(session_id, owner_id=alice.pk)
    assert (again.pk, again.session_id, again.created) == (opened.pk, session_id, False)
    for stranger in (bob.pk, None):  # another user, and an anonymous socket
        with pytest.raises(SessionOwnershipError):
            conversations.open_conversation(session_id, owner_id=stranger)
    # An anonymous socket may use a conversation without an owner; a signed-in user may not.
    AgentSession.objects.create(session_id="unowned")
    assert conversations.open_conversation("unowned", owner_id=None).created is False
    with pytest.raises(SessionOwnershipError):
        conversations.open_conversation("unowned", owner_id=alice.pk)


def test_find_conversation_writes_nothing(session_id: str) -> None:
    alice, bob = user("alice"), user("bob")
    assert conversations.find_conversation(session_id, owner_id=alice.pk) is None
    assert not AgentSession.objects.filter(session_id=session_id).exists()
    row = write(session_id, user_message("hi"), owner_id=alice.pk)
    found = conversations.find_conversation(session_id, owner_id=alice.pk)
    assert found == conversations.OpenedConversation(pk=row.pk, session_id=session_id)
    with pytest.raises(SessionOwnershipError):
        conversations.find_conversation(session_id, owner_id=bob.pk)


def test_history_pages_back_from_the_newest(session_id: str) -> None:
    row = write(session_id, *[user_message(f"m{n}") for n in range(5)])
    newest = conversations.read_history(row.pk, up_to_item_id=None, limit=2)
    assert [item["content"] for item in newest.items] == ["m3", "m4"]
    assert newest.has_more
    older = conversations.read_history(
        row.pk, up_to_item_id=None, limit=2, before_id=newest.entries[0].id
    )
    assert [item["content"] for item in older.items] == ["m1", "m2"]
    oldest = conversations.read_history(
        row.pk, up_to_item_id=None, limit=2, before_id=older.entries[0].id
    )
    assert ([item["content"] for item in oldest.items], oldest.has_more) == (["m0"], False)
    # The watermark leaves out what a run in progress already reported itself.
    ids = item_ids(session_id)
    upto = conversations.read_history(row.pk, up_to_item_id=ids[1], limit=None)
    assert [item["content"] for item in upto.items] == ["m0", "m1"]


def test_a_bounded_page_shows_the_newest_and_no_output_without_its_call(session_id: str) -> None:
    big = "x" * 5000
    row = write(session_id, user_message("small"), user_message(big))
    history = conversations.read_history(row.pk, up_to_item_id=None, limit=None, max_chars=100)
    # The newest item alone is over the budget; it is still shown, and nothing older.
    assert ([item["content"] for item in history.items], history.has_more) == ([big], True)
    roomy = conversations.read_history(row.pk, up_to_item_id=None, limit=None, max_chars=10**6)
    assert (len(roomy.items), roomy.has_more) == (2, False)
    # A cut page of [output, answer]: an output without its call is not shown alone.
    other = write("tools", user_message("q"), call("c1"), output("c1"), assistant_message("a"))
    cut = conversations.read_history(other.pk, up_to_item_id=None, limit=2)
    assert cut.items == [assistant_message("a")]
    whole = conversations.read_history(other.pk, up_to_item_id=None, limit=None)
    assert whole.items[1:3] == [call("c1"), output("c1")]


def test_history_notes_its_runs_and_the_one_in_progress(session_id: str) -> None:
    row = write(session_id, *[user_message(f"m{n}") for n in range(4)])
    ids, now = item_ids(session_id), timezone.now()
    ended = AgentRun.objects.create(
        session=row,
        status="failed",
        started_at=now - timedelta(minutes=2),
        history_item_id=ids[0],
        last_item_id=ids[1],
        error_code="agent_error",
        partial_text="Half a rep",
    )
    live = AgentRun.objects.create(
        session=row,
        started_at=now - timedelta(minutes=1),
        history_item_id=ids[3],
        lease_expires_at=now + timedelta(minutes=5),
    )
    history = conversations.read_history(row.pk, up_to_item_id=None, limit=None)
    assert [note.run_id for note in history.runs] == [str(ended.run_id), str(live.run_id)]
    assert history.runs[0] == conversations.RunNote(
        str(ended.run_id), "failed", ids[0], ids[1], "Half a rep", "agent_error", ""
    )
    assert history.active_run_id == str(live.run_id)
    # The part of history before the running run leaves the running run out.
    before = conversations.read_history(row.pk, up_to_item_id=ids[3], limit=None)
    assert [note.run_id for note in before.runs] == [str(ended.run_id)]
    # A running record whose lease ran out is no run in progress.
    AgentRun.objects.filter(pk=live.pk).update(lease_expires_at=now - timedelta(seconds=1))
    assert conversations.read_history(row.pk, up_to_item_id=None, limit=1).active_run_id is None


def test_a_cut_page_keeps_the_note_of_a_run_waiting_for_decisions(session_id: str) -> None:
    row = write(session_id, *[user_message(f"m{n}") for n in range(4)])
    ids = item_ids(session_id)
    waiting = AgentRun.objects.create(
        session=row, status="waiting", started_at=timezone.now(), history_item_id=ids[2]
    )
    for limit in (None, 2):  # the whole history, and a page that leaves older items out
        history = conversations.read_history(row.pk, up_to_item_id=None, limit=limit)
        assert [note.run_id for note in history.runs] == [str(waiting.run_id)], limit


def test_lock_conversations_takes_only_the_still_stale_ones() -> None:
    now = timezone.now()
    old = write("old", user_message("a"))
    fresh = write("fresh", user_message("b"))
    AgentSession.objects.filter(pk=old.pk).update(updated_at=now - timedelta(days=3))
    pks = [old.pk, fresh.pk, 10**9]  # an id that names no conversation is skipped
    assert sorted(conversations.lock_conversations(connection, pks, before=None)) == sorted(
        [old.pk, fresh.pk]
    )
    stale = conversations.lock_conversations(connection, pks, before=now - timedelta(days=1))
    assert stale == [old.pk]
    assert conversations.lock_conversations(connection, [], before=None) == []


def test_delete_items_of_empties_only_the_given_conversations() -> None:
    one = write("one", user_message("a"), user_message("b"))
    two = write("two", user_message("c"))
    kept = write("kept", user_message("d"))
    assert conversations.delete_items_of(connection, [one.pk, two.pk]) == 3
    assert list(SessionItem.objects.values_list("session_id", flat=True)) == [kept.pk]
    assert conversations.delete_items_of(connection, []) == 0
    # The rows themselves stay; their counts are the caller's to reset.
    assert AgentSession.objects.count() == 3


def test_the_row_estimate_is_postgresqls_own() -> None:
    for n in range(3):
        write(f"c{n}", user_message("a"))
    if connection.vendor != "postgresql":
        # SQLite keeps no estimate: the caller counts exactly.
        assert conversations.estimated_rows(connection, AgentSession) is None
        return
    with connection.cursor() as cursor:
        # The planner's statistics: ANALYZE counts the rows this transaction inserted.
        cursor.execute(f"ANALYZE {connection.ops.quote_name(AgentSession._meta.db_table)}")
    assert conversations.estimated_rows(connection, AgentSession) == 3


def test_a_run_that_ends_while_the_history_is_read_is_shown_ended_with_its_reply(
    session_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race as it happens: the run's reply and end are written between the read of
    the items and the read of the runs (a real write, interleaved by wrapping the read)."""
    from agents.usage import Usage

    from django_agent_sessions.store import runs

    row = write(session_id, user_message("Hi"))
    started = start(row)
    read_items = conversations._read

    def end_the_run_after_the_first_read(*args: Any) -> conversations.History:
        history = read_items(*args)
        if not AgentRun.objects.filter(pk=started.pk, status="completed").exists():
            write(session_id, assistant_message("Hello!"))
            assert runs.finish.sync(started.pk, status="completed", usage=Usage()) is not None
        return history

    monkeypatch.setattr(conversations, "_read", end_the_run_after_the_first_read)
    history = conversations.read_history(row.pk, up_to_item_id=None, limit=None)
    # Either the run in progress (its events follow), or over with its reply; never over
    # without it (a tab would drop the end as shown and miss the reply).
    assert history.active_run_id is None
    assert [item["role"] for item in history.items] == ["user", "assistant"]
    assert [note.status for note in history.runs] == ["completed"]
