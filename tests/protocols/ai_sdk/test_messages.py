"""``ui_messages``: a conversation's stored history as ``UIMessage`` dicts."""

from __future__ import annotations

from django_agent_sessions.protocols.ai_sdk.messages import ui_messages


def message(role: str, text: str, **fields: object) -> dict:
    return {"kind": "message", "role": role, "text": text, **fields}


def test_a_person_s_messages_and_each_run_s_items_are_messages():
    items = [
        message("system", "Be brief.", id=1, run_id=None),
        message("user", "Hi", id=2, run_id="r1", client_id="m-1"),
        message("assistant", "Hello", id=3, run_id="r1"),
        message("user", "Again", id=4, run_id="r2"),
        {
            "kind": "tool_call",
            "call_id": "c1",
            "name": "look",
            "arguments": "{}",
            "id": 5,
            "run_id": "r2",
        },
        {"kind": "tool_output", "call_id": "c1", "output": "seen", "id": 6, "run_id": "r2"},
        message("assistant", "Seen.", id=7, run_id="r2"),
    ]
    assert ui_messages(items) == [
        {"id": "m-1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]},
        {
            "id": "r1",
            "role": "assistant",
            "parts": [{"type": "step-start"}, {"type": "text", "text": "Hello", "state": "done"}],
        },
        {"id": "item-4", "role": "user", "parts": [{"type": "text", "text": "Again"}]},
        {
            "id": "r2",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "tool-look",
                    "toolCallId": "c1",
                    "state": "output-available",
                    "input": {},
                    "output": "seen",
                },
                {"type": "step-start"},
                {"type": "text", "text": "Seen.", "state": "done"},
            ],
        },
    ]


def test_items_stored_without_a_run_are_one_reply_and_a_stopped_run_shows_its_text():
    items = [
        message("user", "Hi", id=1, run_id=None),
        message("assistant", "One", id=2, run_id=None),
        message("assistant", "Two", id=3, run_id=None),
        message("user", "More", id=4, run_id="r9"),
        {**message("assistant", "Half a rep", id=None, run_id="r9"), "status": "cancelled"},
        {**message("assistant", "", id=None, run_id="r10"), "status": "cancelled"},
    ]
    shown = ui_messages(items)
    assert [(m["id"], m["role"]) for m in shown] == [
        ("item-1", "user"),
        ("item-2", "assistant"),
        ("item-4", "user"),
        ("r9", "assistant"),
    ]
    assert [p.get("text") for p in shown[1]["parts"]] == [None, "One", "Two"]
    assert shown[3]["parts"][1] == {"type": "text", "text": "Half a rep", "state": "done"}


def test_files_and_pending_calls():
    files = [{"id": 8, "name": "a.png", "content_type": "image/png", "size": 3}]
    items = [message("user", "Look", id=1, run_id="r1", files=files)]
    pending = [{"run_id": "r1", "call_id": "c1", "name": "pay", "arguments": '{"n": 1}'}]
    shown = ui_messages(items, pending, file_url=lambda file: f"/files/{file['id']}/")
    assert shown[0]["parts"] == [
        {"type": "file", "mediaType": "image/png", "filename": "a.png", "url": "/files/8/"},
        {"type": "text", "text": "Look"},
    ]
    assert shown[1]["id"] == "r1"
    assert shown[1]["parts"][1] == {
        "type": "tool-pay",
        "toolCallId": "c1",
        "state": "approval-requested",
        "input": {"n": 1},
        "approval": {"id": "c1"},
    }
    assert ui_messages(items)[0]["parts"] == [{"type": "text", "text": "Look"}]  # no URL: no part
