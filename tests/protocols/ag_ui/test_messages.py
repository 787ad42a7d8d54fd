"""Stored history as AG-UI messages: each kind of display item, tool calls on the
assistant message before them, run notes marked, and every message valid for the
protocol's own model."""

from __future__ import annotations

from ag_ui.core import Message
from pydantic import TypeAdapter

from django_agent_sessions.protocols.ag_ui.messages import snapshot

MESSAGE: TypeAdapter = TypeAdapter(Message)


def _dumped(items: list[dict]) -> list[dict]:
    messages = [m.model_dump(by_alias=True, mode="json") for m in snapshot(items)]
    for message in messages:
        MESSAGE.validate_python(message)
    return messages


def test_a_conversation_with_a_tool_call_becomes_the_messages_a_client_holds():
    items = [
        {"kind": "message", "role": "user", "text": "Weather?", "id": 1, "client_id": "m-1"},
        {"kind": "message", "role": "assistant", "text": "Let me look.", "id": 2},
        {"kind": "tool_call", "call_id": "c1", "name": "get_weather", "arguments": "{}", "id": 3},
        {"kind": "tool_output", "call_id": "c1", "output": "sunny", "id": 4},
        {"kind": "reasoning", "text": "It is sunny.", "id": 5},
        {"kind": "reasoning", "text": "", "id": 6},
        {"kind": "message", "role": "assistant", "text": "Sunny.", "id": 7},
    ]
    assert _dumped(items) == [
        {"id": "m-1", "role": "user", "content": "Weather?"},
        {
            "id": "item-2",
            "role": "assistant",
            "content": "Let me look.",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                }
            ],
        },
        {"id": "item-4", "role": "tool", "content": "sunny", "toolCallId": "c1"},
        {"id": "item-5", "role": "reasoning", "content": "It is sunny."},
        {"id": "item-7", "role": "assistant", "content": "Sunny."},
    ]


def test_a_call_after_a_tool_output_opens_an_assistant_message_of_its_own():
    items = [
        {"kind": "tool_output", "call_id": "c0", "output": "x", "id": 1},
        {"kind": "tool_call", "call_id": "c1", "name": "f", "arguments": "{}", "id": 2},
    ]
    second = _dumped(items)[1]
    assert (second["id"], second["role"], second["toolCalls"][0]["id"]) == (
        "item-2",
        "assistant",
        "c1",
    )


def test_a_stopped_reply_is_marked_and_other_roles_keep_theirs():
    items = [
        {"kind": "message", "role": "system", "text": "Be brief.", "id": 1},
        {"kind": "message", "role": "developer", "text": "Rules.", "id": 2},
        {
            "kind": "message",
            "role": "assistant",
            "text": "Half",
            "id": None,
            "run_id": "r1",
            "status": "failed",
            "error": {"code": "agent_error"},
        },
        {"kind": "handoff", "source": "a", "target": "b"},
        {"kind": "other", "type": "compaction", "id": 4},
    ]
    assert _dumped(items) == [
        {"id": "item-1", "role": "system", "content": "Be brief."},
        {"id": "item-2", "role": "developer", "content": "Rules."},
        {
            "id": "run-r1",
            "role": "assistant",
            "content": "Half",
            "metadata": {"status": "failed", "error": {"code": "agent_error"}},
        },
    ]
