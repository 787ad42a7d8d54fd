"""``chat_request``: what a POST of ``DefaultChatTransport`` asks, checked as frames are."""

from __future__ import annotations

import json

import pytest

from django_agent_sessions.protocols.ai_sdk.requests import chat_request
from django_agent_sessions.streaming import frames


def body(*messages: dict, **fields: object) -> str:
    return json.dumps(
        {"id": "chat-1", "messages": list(messages), "trigger": "submit-message", **fields}
    )


def user(text: str, message_id: str = "m-1", *parts: dict) -> dict:
    return {"id": message_id, "role": "user", "parts": [*parts, {"type": "text", "text": text}]}


def test_the_last_message_is_the_new_one_with_its_id_and_files():
    file = {"type": "file", "mediaType": "image/png", "url": "/chat/c/chat-1/files/12/"}
    asked = chat_request(body(user("old", "m-0"), user("Hi", "m-1", file)))
    assert asked.chat_id == "chat-1"
    assert asked.message == {
        "type": "user_message",
        "text": "Hi",
        "files": [12],
        "client_id": "m-1",
    }
    # One message alone (``prepareSendMessagesRequest``), with an id the wire cannot keep.
    alone = chat_request(json.dumps({"id": "chat-1", "message": user("Yo", "x" * 65)}))
    assert alone.message == {"type": "user_message", "text": "Yo"}


def test_a_file_not_from_the_chat_is_refused_as_the_wire_refuses_it():
    data = {"type": "file", "mediaType": "text/plain", "url": "data:text/plain;base64,aGk="}
    with pytest.raises(frames.BadFrame) as refused:
        chat_request(body(user("Hi", "m-1", data)))
    assert refused.value.code == "invalid_frame"


def test_approval_responses_are_decisions():
    parts = [
        {
            "type": "tool-pay",
            "toolCallId": "c1",
            "state": "approval-responded",
            "approval": {"id": "c1", "approved": True},
        },
        {
            "type": "tool-pay",
            "toolCallId": "c2",
            "state": "approval-responded",
            "approval": {"id": "c2", "approved": False, "reason": "Too much."},
        },
        {"type": "tool-look", "toolCallId": "c3", "state": "output-available"},
    ]
    asked = chat_request(body(user("pay"), {"id": "run-1", "role": "assistant", "parts": parts}))
    assert asked.message is None
    assert asked.decisions == [
        {"type": "approval", "call_id": "c1", "approve": True},
        {"type": "approval", "call_id": "c2", "approve": False, "message": "Too much."},
    ]
    assert asked.known_calls == {"c1", "c2", "c3"}


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{", "invalid_json"),
        (json.dumps({"messages": []}), "invalid_frame"),
        (body(), "invalid_frame"),
        (body(user("Hi"), trigger="regenerate-message"), "invalid_frame"),
        (body({"id": "a", "role": "assistant", "parts": []}), "invalid_frame"),
        (body(user(" ")), "empty_text"),
        (body(user("é" * 40_000)), "too_large"),  # 80 kB of UTF-8: over MAX_MESSAGE_BYTES
    ],
)
def test_what_is_refused_carries_the_wire_s_code(text, code):
    with pytest.raises(frames.BadFrame) as refused:
        chat_request(text)
    assert refused.value.code == code
