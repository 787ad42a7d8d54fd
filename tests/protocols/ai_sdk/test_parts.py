"""``PartWriter``: the wire's events of one run as the protocol's chunks."""

from __future__ import annotations

from django_agent_sessions.protocols.ai_sdk.parts import PartWriter, error_text, tool_input

RUN = "run-1"


def types(chunks: list[dict]) -> list[str]:
    return [chunk["type"] for chunk in chunks]


def test_deltas_are_one_text_part_completed_by_the_stored_message():
    writer = PartWriter()
    chunks = writer.begin(RUN) + writer.event({"type": "text.delta", "delta": "Hel"})
    # A delta the follower never got: the stored message's text has it.
    chunks += writer.event(
        {
            "type": "item.completed",
            "item": {"kind": "message", "role": "assistant", "text": "Hello"},
        }
    )
    assert chunks == [
        {"type": "start", "messageId": RUN},
        {"type": "start-step"},
        {"type": "text-start", "id": "text-1"},
        {"type": "text-delta", "id": "text-1", "delta": "Hel"},
        {"type": "text-delta", "id": "text-1", "delta": "lo"},
        {"type": "text-end", "id": "text-1"},
    ]
    assert types(writer.event({"type": "run.completed"})) == ["finish-step", "finish"]
    assert writer.ended


def test_a_new_step_begins_after_tool_outputs():
    writer = PartWriter()
    writer.begin(RUN)
    call = {
        "kind": "tool_call",
        "call_id": "c1",
        "name": "get_weather",
        "arguments": '{"city": "Oslo"}',
    }
    chunks = writer.item(call) + writer.item(
        {"kind": "tool_output", "call_id": "c1", "output": "rain"}
    )
    chunks += writer.text("Rain.")
    assert types(chunks) == [
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        "text-start",
        "text-delta",
    ]
    assert chunks[2]["input"] == {"city": "Oslo"}


def test_the_outputs_and_decisions_of_calls_the_client_lacks_are_not_sent():
    writer = PartWriter(known_calls={"c1"})
    writer.begin(RUN)
    assert writer.item({"kind": "tool_output", "call_id": "c9", "output": "?"}) == []
    assert writer.event({"type": "approval.resolved", "call_id": "c9", "approve": True}) == []
    assert types(writer.item({"kind": "tool_output", "call_id": "c1", "output": "ok"})) == [
        "tool-output-available"
    ]


def test_an_approval_of_a_call_not_shown_shows_the_call_first():
    writer = PartWriter()
    writer.begin(RUN)
    frame = {"type": "approval.requested", "call_id": "c2", "name": "pay", "arguments": "{}"}
    chunks = writer.event(frame)
    assert types(chunks) == [
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "tool-approval-request",
    ]
    assert chunks[-1] == {"type": "tool-approval-request", "approvalId": "c2", "toolCallId": "c2"}
    decided = writer.event({"type": "approval.resolved", "call_id": "c2", "approve": False})
    assert decided == [{"type": "tool-approval-response", "approvalId": "c2", "approved": False}]
    assert writer.pause()[-1] == {"type": "finish", "finishReason": "tool-calls"}


def test_failed_and_cancelled_runs_end_as_the_protocol_says():
    failed = PartWriter()
    failed.begin(RUN)
    failed.text("Par")
    error = {"code": "agent_error", "message": "The assistant failed."}
    chunks = failed.event({"type": "run.failed", "error": error})
    assert chunks == [
        {"type": "text-end", "id": "text-1"},
        {"type": "finish-step"},
        {"type": "error", "errorText": "agent_error: The assistant failed."},
        {"type": "finish", "finishReason": "error"},
    ]
    cancelled = PartWriter()
    cancelled.begin(RUN)
    assert cancelled.event({"type": "run.cancelled"}) == [
        {"type": "abort", "reason": "cancelled"},
        {"type": "finish", "finishReason": "other"},
    ]


def test_tool_input_is_the_parsed_json_or_the_text_as_written():
    assert tool_input('{"a": [1]}') == {"a": [1]}
    assert tool_input("not json") == "not json"
    assert tool_input("[" * 100_000) == "[" * 100_000  # RecursionError, not a crash
    assert error_text("busy", "Wait.") == "busy: Wait."
