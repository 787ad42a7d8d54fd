"""``store.search_statements``: SQLite's index takes the items a batch at a time and a
search finds the items of the batch to come meanwhile; PostgreSQL's search matches a
user's newest items before it asks the index, and asks it only for older ones."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_agent_sessions.models import SessionItem
from django_agent_sessions.store import search, search_statements
from django_agent_sessions.store.statements import SEARCH_FTS, SEARCH_STATE
from tests.conftest import assistant_message, user_message
from tests.store.helpers import item_ids, user, write

pytestmark = pytest.mark.django_db


@pytest.fixture
def sqlite_batches_of_3(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index takes a batch every 3 items, and the table holds every item so far
    (ids go on from the largest ever used, which other tests may have raised)."""
    if not search.has_fts(connection):
        pytest.skip("SQLite's FTS5 index")
    monkeypatch.setattr(search_statements, "PENDING_ITEMS", 3)
    search.install(connection)
    newest = write("seed", user_message("seed")).items.get().pk
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {SEARCH_STATE} SET indexed_to = %s", [newest])


def indexed(word: str) -> list[int]:
    """The items the FTS5 table itself holds with ``word``."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT rowid FROM {SEARCH_FTS} WHERE {SEARCH_FTS} MATCH %s", [word])
        return sorted(row[0] for row in cursor.fetchall())


def indexed_to() -> int:
    with connection.cursor() as cursor:
        cursor.execute(search_statements.INDEXED_TO)
        return int(cursor.fetchone()[0])


def hits(owner: Any, query: str) -> list[int]:
    """The items found (not titles), in the order found."""
    return [hit.item_id for hit in search.search(owner, query, limit=50) if hit.item_id]


@pytest.mark.usefixtures("sqlite_batches_of_3")
def test_items_wait_for_a_batch_and_are_found_meanwhile() -> None:
    ann = user("ann")
    mark = indexed_to()
    conversation = write(
        "c", user_message("walnut one"), user_message("walnut two"), owner_id=ann.pk
    )
    ids = item_ids("c")
    assert (indexed_to(), indexed("walnut")) == (mark, [])  # not yet in the table
    assert hits(ann.pk, "walnut") == ids[::-1]  # but found, newest first
    assert [
        h.item_id for h in search.in_conversation(conversation.pk, "wal", using="default")
    ] == ids
    assert search.conversations_with("walnut", using="default") == [conversation.pk]
    write("c", assistant_message("more"), user_message("walnut three"), owner_id=ann.pk)
    ids = item_ids("c")
    assert (indexed_to(), indexed("walnut")) == (ids[-1], [ids[0], ids[1], ids[3]])
    assert hits(ann.pk, "walnut") == [ids[3], ids[1], ids[0]]  # each once


@pytest.mark.usefixtures("sqlite_batches_of_3")
def test_deletes_and_updates_change_the_table_only_for_items_it_holds() -> None:
    """Updates change it at once; deletes a batch at a time (none is found meanwhile)."""
    ann = user("ann")
    write("c", *(user_message(f"pecan {n}") for n in range(4)), owner_id=ann.pk)
    write("c", user_message("pecan pending"), owner_id=ann.pk)
    first, *_, held, waiting = SessionItem.objects.filter(session__session_id="c").order_by("id")
    assert indexed("pecan") == [first.id, *range(first.id + 1, held.id + 1)]
    SessionItem.objects.filter(pk=waiting.pk).update(search_text="hazelnut")
    SessionItem.objects.filter(pk=held.pk).update(search_text="hazelnut too")
    SessionItem.objects.filter(pk=first.pk).delete()
    assert indexed("hazelnut") == [held.id]
    assert sorted(hits(ann.pk, "hazelnut")) == [held.id, waiting.id]
    # A deleted item waits in the queue: the table holds it, a search does not find it.
    assert (queued(), indexed("pecan")) == ([first.id], list(range(first.id, held.id)))
    assert sorted(hits(ann.pk, "pecan")) == list(range(first.id + 1, held.id))
    SessionItem.objects.filter(pk__in=range(first.id + 1, held.id)).delete()  # a batch: out
    assert (queued(), indexed("pecan"), hits(ann.pk, "pecan")) == ([], [], [])


def queued() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT item FROM {search_statements.SEARCH_DELETED} ORDER BY item")
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.usefixtures("sqlite_batches_of_3")
def test_an_item_inserted_at_or_below_the_mark_is_found_after_a_reindex() -> None:
    """No trigger runs on inserts (it cost every add_items); an explicit id at or
    below the mark (loaddata) waits for ``agent_sessions_reindex``."""
    ann = user("ann")
    conversation = write("c", *(user_message("almond") for _ in range(5)), owner_id=ann.pk)
    gone = SessionItem.objects.filter(session=conversation).order_by("id")[1].pk
    SessionItem.objects.filter(pk=gone).delete()
    assert gone < indexed_to()
    payload = '{"role": "user", "content": "almond 2"}'
    SessionItem.objects.create(
        id=gone, session=conversation, payload=payload, search_text="almond 2"
    )
    assert indexed("2") == []
    search.reindex("default")
    assert indexed("2") == [gone]
    assert hits(ann.pk, "almond 2") == [gone]


def test_postgresql_asks_its_index_only_past_the_users_newest_items(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's search")
    monkeypatch.setattr(search_statements, "RECENT_ITEMS", 3)
    ann, bob = user("ann"), user("bob")
    write("old", user_message("chestnut old"), user_message("other"), owner_id=ann.pk)
    write("new", *(user_message(f"chestnut {n}") for n in range(3)), owner_id=ann.pk)
    write("bob", user_message("chestnut bob"), owner_id=bob.pk)
    ids = list(SessionItem.objects.order_by("id").values_list("id", flat=True))
    with CaptureQueriesContext(connection) as newest:  # the titles, the newest items
        assert [h.item_id for h in search.search(ann.pk, "chestnut", limit=3)] == ids[4:1:-1]
    with CaptureQueriesContext(connection) as older:  # and the index
        assert hits(ann.pk, "chestnut") == [ids[4], ids[3], ids[2], ids[0]]
    assert (len(newest.captured_queries), len(older.captured_queries)) == (2, 3)
    assert hits(ann.pk, "chestnut old") == [ids[0]]
    assert hits(bob.pk, "chestnut") == [ids[5]]
