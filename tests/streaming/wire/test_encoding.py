"""``wire``: display items as the browser gets them (stored and live alike), the
``history`` frame's items within their byte budget, the notes of runs that ended early,
frames as valid UTF-8, and a snapshot turned back into the events it stands for."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from django_agent_sessions.store.conversations import History, RunNote, StoredItem
from django_agent_sessions.streaming.wire import encoding
from django_agent_sessions.streaming.wire.protocol import PROTOCOL_VERSION
from tests.conftest import assistant_message, user_message

AT = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def stored(item_id: int, item: Any) -> StoredItem:
    return StoredItem(id=item_id, created_at=AT, item=item)


def run(run_id: str, status: str, after: int, last: int, **fields: Any) -> RunNote:
    values = {"partial_text": "", "error_code": "", "client_id": "", **fields}
    return RunNote(run_id=run_id, status=status, history_item_id=after, last_item_id=last, **values)


def test_each_kind_of_stored_item_is_shown_as_documented() -> None:
    assert encoding.display_item(user_message("Hi")) == {
        "kind": "message",
        "role": "user",
        "text": "Hi",
    }
    reply = encoding.display_item(assistant_message("**Yes** <script>x()</script>"))
    assert (reply["role"], reply["text"]) == ("assistant", "**Yes** <script>x()</script>")
    assert "<strong>Yes</strong>" in reply["html"]
    assert "<script" not in reply["html"]
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a": 1}'}
    assert encoding.display_item(call) == {
        "kind": "tool_call",
        "call_id": "c1",
        "name": "f",
        "arguments": '{"a": 1}',
    }
    output = {"type": "function_call_output", "call_id": "c1", "output": "done"}
    assert encoding.display_item(output) == {
        "kind": "tool_output",
        "call_id": "c1",
        "output": "done",
    }
    assert encoding.display_item({"type": "reasoning", "summary": []})["kind"] == "reasoning"
    assert encoding.display_item({"type": "new_kind"}) == {"kind": "other", "type": "new_kind"}
    # A role no page knows how to show (stored by server code) is an item to ignore.
    assert encoding.display_item({"role": "critic", "content": "x"}) == {
        "kind": "other",
        "type": "message",
    }
    assert (
        encoding.display_item({"role": "system", "content": "*rules*"})["html"].strip()
        == "<p><em>rules</em></p>"
    )


def test_a_lone_surrogate_is_shown_as_a_replacement_character() -> None:
    assert encoding.display_item(user_message("half \ud83d"))["text"] == "half \ufffd"


def test_frames_are_utf8_json_even_with_a_lone_surrogate() -> None:
    assert encoding.frame_text({"t": "é"}) == '{"t": "é"}'  # non-ASCII kept, not escaped
    assert encoding.frame_size({"t": "é"}) == len('{"t": "é"}'.encode())
    text = encoding.frame_text({"t": "é \ud83d"})
    text.encode("utf-8")  # would raise: daphne would close the socket with 1011
    assert json.loads(text) == {"t": "é \ud83d"}  # escaped, not altered


def test_history_items_carry_their_ids_runs_and_the_client_id_of_their_message() -> None:
    entries = [
        stored(1, user_message("Old")),
        stored(2, user_message("Hi")),
        stored(3, assistant_message("Hello")),
    ]
    items = encoding.history_items(entries, [run("r1", "completed", 1, 3, client_id="c-7")])
    assert [(i["id"], i["run_id"], i.get("client_id")) for i in items] == [
        (1, None, None),
        (2, "r1", "c-7"),  # only the user message the client sent with this id
        (3, "r1", None),
    ]
    assert items[0]["created_at"] == AT.isoformat()


def test_a_run_that_failed_or_was_stopped_leaves_its_streamed_reply_as_a_note() -> None:
    entries = [stored(1, user_message("Hi")), stored(2, user_message("Again"))]
    runs = [
        run("r1", "failed", 1, 1, partial_text="Half an ans", error_code="max_turns"),
        run("r2", "cancelled", 2, 2, partial_text="Stopp"),
    ]
    items = encoding.history_items(entries, runs)
    assert [(i["id"], i.get("status"), i["text"]) for i in items] == [
        (1, None, "Hi"),
        (None, "failed", "Half an ans"),
        (2, None, "Again"),
        (None, "cancelled", "Stopp"),
    ]
    assert items[1]["error"] == {"code": "max_turns"}
    assert "error" not in items[3]
    assert items[1]["run_id"] == "r1"
    assert items[1]["html"]
    # A run interrupted by a deploy shows as failed, with its own code.
    interrupted = run("r3", "interrupted", 2, 2, partial_text="x", error_code="interrupted")
    note = encoding.history_items(entries, [interrupted])[-1]
    assert (note["status"], note["error"]) == ("failed", {"code": "interrupted"})


def test_the_history_drops_its_oldest_items_to_fit_its_byte_budget() -> None:
    entries = [stored(n, user_message(f"message {n} " + "x" * 100)) for n in range(1, 6)]
    history = History(entries=entries, runs=[], active_run_id=None, has_more=False)
    whole = encoding.history_fields(history, None)
    assert ([i["id"] for i in whole["items"]], whole["has_more"]) == ([1, 2, 3, 4, 5], False)
    budget = sum(encoding.frame_size(i) + 1 for i in whole["items"][-2:])
    fitted = encoding.history_fields(history, budget)
    assert [i["id"] for i in fitted["items"]] == [4, 5]
    assert (fitted["has_more"], fitted["oldest_id"]) == (True, 4)  # the page loads older
    # One item too big for the budget is still sent: the page must show something.
    assert [i["id"] for i in encoding.history_fields(history, 10)["items"]] == [5]


def test_the_history_frame_says_its_protocol() -> None:
    fields = {"items": [], "has_more": False, "oldest_id": None}
    frame = encoding.history_frame(fields, last_item_id=9, active_run=None, pending_approvals=[])
    assert frame == {
        "type": "history",
        "protocol": PROTOCOL_VERSION,
        **fields,
        "last_item_id": 9,
        "active_run": None,
        "pending_approvals": [],
        "queued": [],
    }


def test_a_snapshot_becomes_the_events_it_stands_for_in_order() -> None:
    snapshot = {
        "run_id": "r",
        "seq": 6,
        "items": [{"kind": "message", "role": "user", "text": "Hi"}, {"kind": "tool_call"}],
        "item_seqs": [2, 5],
        "text": "So far",
        "text_seq": 4,
    }
    missed = encoding.missed_events(snapshot)
    assert [(e["type"], e["seq"]) for e in missed] == [
        ("item.completed", 2),
        ("text.delta", 4),
        ("item.completed", 5),
    ]
    assert missed[1] == {"type": "text.delta", "run_id": "r", "seq": 4, "delta": "So far"}
    assert encoding.missed_events({**snapshot, "text": ""})[-1]["seq"] == 5  # no empty delta
