"""``store.compaction``: the bounded snapshot of a conversation's newest rows, and the
replacement of exactly those rows by a summary, refused when they changed meanwhile."""

from __future__ import annotations

from typing import Any

import pytest

from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import compaction
from tests.conftest import user_message
from tests.store.helpers import add_unreadable, encode, item_ids, scope, stored, user, write

pytestmark = pytest.mark.django_db

SUMMARY = {"type": "compaction", "id": "cmp-1", "encrypted_content": "synthetic"}


def messages(*texts: str) -> list[dict[str, Any]]:
    return [user_message(text) for text in texts]


def count(session_id: str) -> int:
    return AgentSession.objects.get(session_id=session_id).item_count


def test_a_snapshot_is_the_newest_rows_oldest_first(session_id: str) -> None:
    write(session_id, *messages("a", "b", "c", "d", "e"))
    ids = item_ids(session_id)
    newest = compaction.snapshot(scope(session_id), 3)
    assert newest == compaction.Snapshot(ids[2:], messages("c", "d", "e"), complete=False)
    # ``complete``: nothing older exists, told by one extra row, not by a count.
    assert compaction.snapshot(scope(session_id), 5).complete
    assert compaction.snapshot(scope(session_id), 50).row_ids == ids


def test_a_snapshot_starts_after_the_newest_unreadable_row(session_id: str) -> None:
    row = write(session_id, *messages("a", "b"))
    add_unreadable(row)
    write(session_id, *messages("c", "d"))
    found = compaction.snapshot(scope(session_id), 10)
    # What could not be read is never offered for replacement (and so never deleted).
    assert (found.items, found.complete) == (messages("c", "d"), False)
    assert found.row_ids == item_ids(session_id)[-2:]


def test_a_snapshot_of_nothing_and_of_someone_elses(session_id: str) -> None:
    assert compaction.snapshot(scope("no-such-conversation"), 5) == compaction.Snapshot(
        [], [], True
    )
    alice, bob = user("alice"), user("bob")
    write(session_id, *messages("private"), owner_id=alice.pk)
    with pytest.raises(SessionOwnershipError):
        compaction.snapshot(scope(session_id, bob.pk), 5)


def test_replace_suffix_swaps_the_snapshot_for_the_summary(session_id: str) -> None:
    write(session_id, *messages("a", "b", "c", "d", "e"))
    newest = compaction.snapshot(scope(session_id), 3)
    replaced = compaction.replace_suffix(
        scope(session_id), newest.row_ids, encode(SUMMARY), None, 10
    )
    assert replaced
    assert stored(session_id) == [*messages("a", "b"), SUMMARY]
    assert count(session_id) == 3


def test_replace_suffix_refuses_when_the_newest_rows_changed(session_id: str) -> None:
    write(session_id, *messages("a", "b", "c"))
    newest = compaction.snapshot(scope(session_id), 2)
    # Another worker appends while the compaction request is out.
    write(session_id, *messages("during"))
    refused = compaction.replace_suffix(scope(session_id), newest.row_ids, encode(SUMMARY), None, 1)
    assert not refused
    assert stored(session_id) == messages("a", "b", "c", "during")
    assert count(session_id) == 4
    # Nothing to replace, and no conversation at all, are refusals too.
    assert not compaction.replace_suffix(scope(session_id), [], encode(SUMMARY), None, 1)
    assert not compaction.replace_suffix(scope("no-such"), [1], encode(SUMMARY), None, 1)
    assert not AgentSession.objects.filter(session_id="no-such").exists()


@pytest.mark.parametrize("batch", [1, 2, 100])
def test_a_pruned_prefix_goes_up_to_the_first_row_it_keeps(session_id: str, batch: int) -> None:
    write(session_id, *messages("expired 1", "expired 2", "kept", "expired 3", "x", "y"))
    newest = compaction.snapshot(scope(session_id), 2)

    def expired(item: Any) -> bool:
        return bool(item["content"].startswith("expired"))

    assert compaction.replace_suffix(
        scope(session_id), newest.row_ids, encode(SUMMARY), expired, batch
    )
    # "expired 3" stays: pruning stops at the first row the wrapper keeps.
    assert stored(session_id) == [*messages("kept", "expired 3"), SUMMARY]
    assert count(session_id) == 3


def test_a_pruned_prefix_stops_at_an_unreadable_row(session_id: str) -> None:
    row = write(session_id, *messages("expired 1"))
    add_unreadable(row)
    write(session_id, *messages("expired 2", "x"))
    newest = compaction.snapshot(scope(session_id), 1)
    assert compaction.replace_suffix(
        scope(session_id), newest.row_ids, encode(SUMMARY), lambda item: True, 10
    )
    # Everything readable before the bad row went; the bad row and what follows stay.
    assert stored(session_id) == [*messages("expired 2"), SUMMARY]
    assert len(item_ids(session_id)) == 3
    assert count(session_id) == 3
