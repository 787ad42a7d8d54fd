"""The item vocabulary: one classification for the chat, the admin and the columns."""

from __future__ import annotations

from django_agent_sessions.item_views import (
    ItemView,
    describe,
    drop_orphan_outputs,
    drop_unanswered_calls,
)


def test_messages_join_text_parts_exactly_and_mark_other_parts():
    assert describe({"role": "user", "content": "Hi"}) == ItemView(
        "message", "message", role="user", text="Hi"
    )
    streamed = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Hel"}, {"type": "output_text", "text": "lo"}],
    }
    assert describe(streamed).text == "Hello"  # what the concatenated deltas were
    mixed = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Look:"},
            {"type": "input_image", "image_url": "data:..."},
            {"type": "input_file", "filename": "a.pdf"},
        ],
    }
    assert describe(mixed).text == "Look:\n[image]\n[file: a.pdf]"


def test_calls_outputs_reasoning_and_unknown_items():
    call = describe({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"})
    assert (call.kind, call.call_id, call.name, call.arguments) == ("tool_call", "c1", "f", "{}")
    hosted = describe({"type": "web_search_call", "id": "ws", "action": {"query": "q"}})
    assert (hosted.kind, hosted.name) == ("tool_call", "web_search_call")
    assert hosted.arguments == '{"action": {"query": "q"}}'
    output = describe({"type": "function_call_output", "call_id": "c1", "output": {"ok": 1}})
    assert (output.kind, output.text) == ("tool_output", '{"ok": 1}')
    thought = describe(
        {"type": "reasoning", "summary": [{"text": "a"}, {"text": "b"}], "content": []}
    )
    assert (thought.kind, thought.text) == ("reasoning", "a\n\nb")
    assert describe({"type": "compaction", "encrypted_content": "x"}).kind == "other"
    assert describe({"foo": 1}).type == "unknown"


def test_handoffs_are_calls_named_by_the_sdk_convention():
    handoff = describe({"type": "function_call", "call_id": "h", "name": "transfer_to_billing"})
    assert handoff.is_handoff
    assert not describe({"type": "function_call", "call_id": "h", "name": "transfer"}).is_handoff


def test_non_text_fields_never_leak_into_text():
    odd = describe({"role": 7, "content": [{"text": 3}, "x", None]})
    assert (odd.role, odd.text) == ("", "[content]")


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


def test_a_window_without_orphans_comes_back_whole():
    call = {"type": "function_call", "call_id": "a"}
    output = {"type": "function_call_output", "call_id": "a"}
    items = [{"role": "user", "content": "hi"}, call, output]
    assert drop_orphan_outputs(items) == items


def test_calls_without_their_output_are_dropped_and_hosted_calls_kept():
    call = {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}
    answered = {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "b", "output": "1"}
    search = {"type": "web_search_call", "id": "ws", "status": "completed"}
    question = {"role": "user", "content": "hi"}
    kept = [question, answered, output, search]
    assert drop_unanswered_calls([question, answered, call, output, search]) == kept


def test_the_reasoning_of_a_dropped_call_goes_with_it():
    question = {"role": "user", "content": "hi"}
    thought = {"type": "reasoning", "id": "rs_1", "summary": []}
    call = {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}
    answered = {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "b", "output": "1"}
    reply = {"role": "assistant", "content": "1"}
    assert drop_unanswered_calls([question, thought, call]) == [question]
    assert drop_unanswered_calls([question, thought]) == [question]  # cut right after it
    assert drop_unanswered_calls([question, thought, call, question]) == [question, question]
    # A call of the same response still follows it; one that was answered keeps it.
    both = [question, thought, call, answered, output, reply]
    assert drop_unanswered_calls(both) == [question, thought, answered, output, reply]
    kept = [question, thought, answered, output, thought, reply]
    assert drop_unanswered_calls(kept) == kept
