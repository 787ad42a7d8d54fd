"""``store.importing``: an import's conversations and items written in one transaction, all
or nothing, refused (``Conflict``) when an id is taken or an owner does not exist.

``tests/transfer/`` tests whole files through ``transfer``; these give the store
validated conversations directly.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import importing
from tests.conftest import assistant_message, user_message
from tests.store.helpers import encode, stored, user, write

pytestmark = pytest.mark.django_db

START = timezone.now().replace(microsecond=0) - timedelta(days=3)


def conversation(session_id: str, *items: Any, owner: str | None = None) -> importing.Conversation:
    """A conversation as the import's validation hands it over: items a minute apart."""
    return importing.Conversation(
        session_id=session_id,
        owner=owner,
        title=f"Title of {session_id}",
        metadata={"source": "import", "n": [1, 2]},
        created_at=START,
        updated_at=START + timedelta(hours=1),
        items=[(at(n), encoded) for n, encoded in enumerate(encode(*items))],
    )


def at(minutes: int) -> datetime:
    return START + timedelta(minutes=minutes)


def insert(*conversations: importing.Conversation) -> None:
    # Batches of one conversation and two items: the batching must not matter.
    importing.insert(conversations, conversation_batch=1, item_batch=2)


def test_an_import_writes_each_conversation_as_it_was(session_id: str) -> None:
    alice = user("alice")
    items = [user_message("hi"), assistant_message("hello"), user_message("bye")]
    insert(conversation(session_id, *items, owner="alice"), conversation("no-owner"))
    row = AgentSession.objects.get(session_id=session_id)
    assert (row.owner_id, row.title, row.metadata, row.item_count) == (
        alice.pk,
        f"Title of {session_id}",
        {"source": "import", "n": [1, 2]},
        3,
    )
    # The file's times, not the time of the import.
    assert (row.created_at, row.updated_at) == (START, START + timedelta(hours=1))
    assert stored(session_id) == items
    rows = SessionItem.objects.filter(session=row).order_by("id")
    assert [r.created_at for r in rows] == [at(0), at(1), at(2)]
    first = rows[0]  # the browsing columns, as DjangoSession's writes fill them
    assert (first.item_type, first.role, first.preview) == ("message", "user", "hi")
    unowned = AgentSession.objects.get(session_id="no-owner")
    assert (unowned.owner_id, unowned.item_count) == (None, 0)


def test_an_existing_conversation_stops_the_whole_import(session_id: str) -> None:
    write(session_id, user_message("already here"))
    with pytest.raises(importing.Conflict, match=f"{session_id!r} already exists"):
        insert(conversation("new", user_message("a")), conversation(session_id))
    assert list(AgentSession.objects.values_list("session_id", flat=True)) == [session_id]
    assert stored(session_id) == [user_message("already here")]


def test_a_missing_owner_stops_the_whole_import() -> None:
    user("alice")
    batch = [
        conversation("a", user_message("x"), owner="alice"),
        conversation("b", owner="zed"),
        conversation("c", owner="bob"),
    ]
    # The first missing name, in order, is the one the message gives.
    with pytest.raises(importing.Conflict, match="Owner 'bob' does not exist"):
        insert(*batch)
    assert not AgentSession.objects.exists()
    assert not SessionItem.objects.exists()


def test_an_empty_import_writes_nothing() -> None:
    insert()
    assert not AgentSession.objects.exists()
