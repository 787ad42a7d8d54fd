"""Exporting (``transfer/exporting.py``): the document's shape, batches, and exact round
trips through an import."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

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
