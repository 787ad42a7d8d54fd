"""Export and import: exact round trips, and bad files that write nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from django_agent_sessions import transfer
from django_agent_sessions.models import AgentSession, SessionItem
from tests.conversations import make_conversation, transcript_items

pytestmark = pytest.mark.django_db

AWKWARD_ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "nul \u0000 inside, emoji 🦜, RTL مرحبا بالعالم"},
    {"z": 1, "a": 2, "role": "user", "content": "keys stay in this order"},
    {"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"x": 1.0}'},
    {"type": "function_call_output", "call_id": "c", "output": {"float": 1.0, "int": 1}},
    {"role": "user", "content": "x" * 100_000},
    {"role": "user", "content": "lone surrogate \ud800 survives"},
    {"type": "custom", "nested": [[[[{"deep": [None, True, False, -0.5, 10**20]}]]]]},
]


def stored(session_id: str) -> list[tuple[str, str, str, str, str]]:
    return list(
        SessionItem.objects.filter(session__session_id=session_id)
        .order_by("id")
        .values_list("payload", "item_type", "role", "call_id", "preview")
    )


def export_text(session_ids: list[str], fmt: str = "json") -> str:
    conversations = AgentSession.objects.filter(session_id__in=session_ids)
    return "".join(transfer.export_chunks(conversations, fmt))


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_export_then_import_is_exact(fmt):
    owner = User.objects.create_user("alice")
    make_conversation("c-awkward", AWKWARD_ITEMS, owner=owner, title="Awkward")
    make_conversation("c-tools", transcript_items())
    make_conversation("c-empty", [], title="Nothing yet")
    AgentSession.objects.filter(session_id="c-tools").update(metadata={"ticket": 42})
    before = {
        row.session_id: (row.owner_id, row.title, row.metadata, row.item_count, row.created_at,
                         row.updated_at)
        for row in AgentSession.objects.all()
    }  # fmt: skip
    items_before = {sid: stored(sid) for sid in before}
    times_before = list(SessionItem.objects.order_by("id").values_list("created_at", flat=True))
    text = export_text(list(before), fmt)
    AgentSession.objects.all().delete()

    imported = transfer.import_conversations(transfer.parse(text, fmt))

    assert imported == transfer.Imported(conversations=3, items=len(AWKWARD_ITEMS) + 7)
    after = {
        row.session_id: (row.owner_id, row.title, row.metadata, row.item_count, row.created_at,
                         row.updated_at)
        for row in AgentSession.objects.all()
    }  # fmt: skip
    assert after == before
    assert {sid: stored(sid) for sid in after} == items_before
    assert list(SessionItem.objects.order_by("id").values_list("created_at", flat=True)) == (
        times_before
    )
    assert export_text(list(before), fmt) == text


def test_export_document_shape():
    make_conversation("c-1", transcript_items(), title="Weather")
    document = json.loads(export_text(["c-1"]))
    assert document["format"] == "django-agent-sessions"
    assert document["version"] == 1
    (conversation,) = document["conversations"]
    assert conversation["session_id"] == "c-1"
    assert conversation["owner"] is None
    assert [entry["item"] for entry in conversation["items"]] == transcript_items()


def test_jsonl_is_one_conversation_per_line():
    make_conversation("c-1", transcript_items())
    make_conversation("c-2", [])
    lines = export_text(["c-1", "c-2"], "jsonl").splitlines()
    assert [json.loads(line)["session_id"] for line in lines] == ["c-1", "c-2"]


def test_export_of_many_conversations_spans_batches(monkeypatch):
    monkeypatch.setattr(transfer.exporting, "EXPORT_FETCH_BATCH", 3)
    for n in range(7):
        make_conversation(f"c-{n}", [{"role": "user", "content": f"hi {n}"}] * (n % 3))
    document = json.loads(export_text([f"c-{n}" for n in range(7)]))
    counts = {c["session_id"]: len(c["items"]) for c in document["conversations"]}
    assert counts == {f"c-{n}": n % 3 for n in range(7)}


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


def test_format_follows_the_file_name():
    assert transfer.format_for("dump.JSONL") == "jsonl"
    assert transfer.format_for("dump.ndjson") == "jsonl"
    assert transfer.format_for("dump.json") == "json"
    assert transfer.format_for("-") == "json"
