"""Importing (``transfer/importing.py``): bad files that write nothing, and owners."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from django_agent_sessions import transfer
from django_agent_sessions.models import AgentSession, SessionItem
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db


def document(*conversations: dict[str, Any]) -> str:
    return json.dumps({"format": "django-agent-sessions", "version": 1,
                       "conversations": list(conversations)})  # fmt: skip


def conversation(session_id: str, items: list[Any], **fields: Any) -> dict[str, Any]:
    stamp = "2026-01-02T03:04:05.123456+00:00"
    return {
        "session_id": session_id,
        "owner": None,
        "title": "",
        "metadata": {},
        "created_at": stamp,
        "updated_at": stamp,
        "items": [{"created_at": stamp, "item": item} for item in items],
        **fields,
    }


GOOD = [{"role": "user", "content": "fine"}]


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        ('{"format": "django-agent-sessions", ', "json", "invalid JSON at line 1 column"),
        ("[" * 100_000, "json", "nested too deeply"),
        ("[1, 2]", "json", "is not a django-agent-sessions export"),
        (json.dumps({"format": "django-agent-sessions", "version": 9}), "json", "version 9"),
        (document(conversation("c-1", GOOD), conversation("c-1", GOOD)), "json", "appears twice"),
        (document(conversation("", GOOD)), "json", "session_id must not be empty"),
        (document(conversation("c-1", GOOD, owner=7)), "json", "owner must be a username"),
        (document(conversation("c-1", GOOD, created_at="yesterday")), "json", "created_at"),
        (document(conversation("c-1", GOOD, created_at="2026-01-02T03:04:05")), "json",
         "with a UTC offset"),
        (document({**conversation("c-1", GOOD), "items": {}}), "json", "items must be a list"),
        (json.dumps(conversation("c-1", GOOD)) + "\n{oops\n", "jsonl", "line 2: invalid JSON"),
        ("{}", "xml", "Unknown import format 'xml'"),
    ],
)  # fmt: skip
def test_bad_files_are_refused_with_a_clear_error(text, fmt, message):
    with pytest.raises(transfer.TransferError, match=message):
        transfer.parse(text, fmt)


def test_a_bad_item_in_the_middle_writes_nothing():
    good = conversation("c-good", GOOD * 3)
    bad = conversation("c-bad", [*GOOD, *GOOD, ["not", "a", "dict"], *GOOD])
    with pytest.raises(transfer.TransferError) as error:
        transfer.parse(document(good, bad))
    assert str(error.value) == (
        # Positions count from 1, as in the docs: the second conversation's third item.
        "conversation 2 ('c-bad'): item 3: an item must be a dict, not list"
    )
    assert not AgentSession.objects.exists()


@override_settings(AGENT_SESSIONS={"MAX_ITEM_BYTES": 100})
def test_items_over_the_size_cap_are_refused():
    big = conversation("c-big", [*GOOD, {"role": "user", "content": "x" * 200}])
    with pytest.raises(transfer.TransferError, match=r"'c-big'\): item 2: .* exceeds"):
        transfer.parse(document(big))


def test_an_existing_conversation_stops_the_whole_import():
    make_conversation("c-2", GOOD)
    parsed = transfer.parse(document(conversation("c-1", GOOD), conversation("c-2", GOOD)))
    with pytest.raises(transfer.TransferError, match="'c-2' already exists"):
        transfer.import_conversations(parsed)
    assert list(AgentSession.objects.values_list("session_id", flat=True)) == ["c-2"]
    assert SessionItem.objects.count() == 1


def test_a_missing_owner_stops_the_whole_import():
    User.objects.create_user("alice")
    parsed = transfer.parse(
        document(conversation("c-1", GOOD, owner="alice"), conversation("c-2", GOOD, owner="bob"))
    )
    with pytest.raises(transfer.TransferError, match="Owner 'bob' does not exist"):
        transfer.import_conversations(parsed)
    assert not AgentSession.objects.exists()


def test_owners_are_matched_by_username():
    alice = User.objects.create_user("alice")
    text = document(conversation("c-1", GOOD, owner="alice"))
    transfer.import_conversations(transfer.parse(text))
    assert AgentSession.objects.get(session_id="c-1").owner == alice
