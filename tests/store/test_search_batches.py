"""``store.search_batches``: SQLite's FTS5 index takes the app's new items a batch at a
time, whoever wrote them, without a trigger on inserts."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import override_settings

from django_agent_sessions.models import SessionItem
from django_agent_sessions.store import search, search_statements
from tests.conftest import user_message
from tests.store.helpers import item_ids, write
from tests.store.test_search_statements import indexed, indexed_to

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fts() -> None:
    if not search.has_fts(connection):
        pytest.skip("SQLite's FTS5 index")
    # The index is made with its mark at the newest item's id, and ids go on from earlier
    # tests (AUTOINCREMENT): an item first puts the mark where this test's ids begin.
    write("warm-up", user_message("warm up"))
    search.install(connection)


def test_a_write_of_the_app_adds_a_due_batch_without_a_trigger() -> None:
    """Items written by anyone go in with the app's next batch."""
    mark = indexed_to()
    conversation = write("c", user_message("cashew first"))
    SessionItem.objects.bulk_create(  # not the app's: no batch, whatever their number
        SessionItem(session=conversation, payload="{}", search_text=f"cashew {n}")
        for n in range(search_statements.PENDING_ITEMS + 1)
    )
    assert (indexed_to(), indexed("cashew")) == (mark, [])
    write("c", user_message("cashew last"))
    ids = item_ids("c")
    assert (indexed_to(), indexed("cashew")) == (ids[-1], ids)


def test_search_switched_off_adds_no_batch() -> None:
    mark = indexed_to()
    with override_settings(AGENT_SESSIONS={"SEARCH": {"ENABLED": False}}):
        for n in range(search_statements.PENDING_ITEMS + 2):
            write("c", user_message(f"brazil {n}"))
    assert (indexed_to(), indexed("brazil")) == (mark, [])
