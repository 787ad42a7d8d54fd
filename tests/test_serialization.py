"""The item <-> stored form layer, without a database."""

from __future__ import annotations

import json

from django_agent_sessions import serialization
from django_agent_sessions.serialization import drop_orphan_outputs, encode_item


def encode(item):
    return encode_item(item, index=0, max_bytes=None, max_depth=100)


def test_browsing_columns_for_each_kind():
    message = encode({"role": "user", "content": "Hello\n  there"})
    assert (message.item_type, message.role, message.preview) == ("message", "user", "Hello there")
    parts = encode(
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "A"}, {"type": "refusal", "refusal": "B"}],
        }
    )
    assert parts.preview == "AB"
    call = encode({"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"x":1}'})
    assert (call.item_type, call.call_id, call.preview) == ("function_call", "c", 'f({"x":1})')
    output = encode({"type": "function_call_output", "call_id": "c", "output": {"ok": True}})
    assert output.preview == '{"ok": true}'
    reasoning = encode({"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]})
    assert reasoning.preview == "hm"


def test_columns_are_safe_for_any_database():
    item = encode({"role": "user\x00", "content": "nul\x00 and \ud800 surrogate " + "x" * 500})
    assert "\x00" not in item.preview + item.role
    item.preview.encode("utf-8")
    assert len(item.preview) == serialization.PREVIEW_CHARS
    assert json.loads(item.payload)["content"].startswith("nul\x00 and \ud800")


def test_payload_is_compact_and_keeps_non_ascii():
    assert encode({"b": "é", "a": [1, 2]}).payload == '{"b":"é","a":[1,2]}'


def test_orphan_outputs_are_dropped_only_without_their_call():
    call = {"type": "function_call", "call_id": "a"}
    output_a = {"type": "function_call_output", "call_id": "a"}
    output_b = {"type": "function_call_output", "call_id": "b"}
    shell_b = {"type": "local_shell_call_output", "call_id": "b"}
    message = {"role": "user", "content": "hi"}
    assert drop_orphan_outputs([output_b, shell_b, call, output_a, message]) == [
        call,
        output_a,
        message,
    ]
    assert drop_orphan_outputs([message, "not a dict"]) == [message, "not a dict"]
