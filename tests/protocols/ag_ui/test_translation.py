"""The wire's frames of one run as AG-UI events: each event valid for the protocol's
own models, text that streamed (or did not) ended once, calls and results, the run's
three ends and its pause, and every other run's frames ignored."""

from __future__ import annotations

from typing import Any

from ag_ui.core import Event
from pydantic import TypeAdapter

from django_agent_sessions.protocols.ag_ui.translation import Translation

EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def _run(*frames: dict[str, Any]) -> tuple[Translation, list[dict[str, Any]]]:
    translation = Translation("thread-1", "client-run")
    translation.follow("ours")
    events = []
    for seq, frame in enumerate(frames, start=2):
        for event in translation.events({"run_id": "ours", "seq": seq, **frame}):
            dumped = event.model_dump(by_alias=True, mode="json")
            EVENT.validate_python(dumped)
            events.append(dumped)
    return translation, events


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "item.completed",
        "item": {"kind": "message", "role": "assistant", "text": text},
    }


def test_streamed_text_is_one_message_started_once_and_ended_by_its_item():
    _t, events = _run(
        {"type": "item.completed", "item": {"kind": "message", "role": "user", "text": "Hi"}},
        {"type": "text.delta", "delta": "Hel"},
        {"type": "text.delta", "delta": "lo."},
        _message("Hello."),
        {"type": "run.completed", "final_output": "Hello.", "usage": {"total_tokens": 3}},
    )
    assert [e["type"] for e in events] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert {e["messageId"] for e in events[:4]} == {"ours:3"}
    assert events[-1] == {
        "type": "RUN_FINISHED",
        "threadId": "thread-1",
        "runId": "client-run",
        "result": "Hello.",
        "usage": [{"totalTokens": 3}],
    }


def test_a_message_whose_deltas_were_lost_gets_the_rest_from_its_item():
    _t, events = _run({"type": "text.delta", "delta": "Hel"}, _message("Hello."))
    assert [e.get("delta") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"] == ["Hel", "lo."]
    _t, events = _run(_message("Whole."))  # nothing streamed
    assert [e["type"] for e in events] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]


def test_a_call_closes_the_text_before_it_and_names_it_as_its_parent():
    call = {
        "kind": "tool_call",
        "call_id": "c1",
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
    }
    _t, events = _run(
        {"type": "text.delta", "delta": "Looking."},
        {"type": "item.completed", "item": call},
        {
            "type": "item.completed",
            "item": {"kind": "tool_output", "call_id": "c1", "output": "sunny"},
        },
    )
    assert [e["type"] for e in events] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ]
    start, args, result = events[3], events[4], events[6]
    assert (start["toolCallId"], start["toolCallName"], start["parentMessageId"]) == (
        "c1",
        "get_weather",
        events[0]["messageId"],
    )
    assert args["delta"] == '{"city":"Paris"}'
    assert (result["toolCallId"], result["content"], result["role"]) == ("c1", "sunny", "tool")


def test_reasoning_with_text_is_a_reasoning_message():
    _t, events = _run(
        {"type": "item.completed", "item": {"kind": "reasoning", "text": "Think."}},
        {"type": "item.completed", "item": {"kind": "reasoning", "text": ""}},
    )
    assert [e["type"] for e in events] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]


def test_a_cancelled_run_finishes_cancelled_and_a_failed_one_is_an_error():
    t, events = _run({"type": "text.delta", "delta": "Par"}, {"type": "run.cancelled"})
    assert [e["type"] for e in events][-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert events[-1]["outcome"] == {"type": "cancelled"}
    assert t.finished
    failed = {"type": "run.failed", "error": {"code": "max_turns", "message": "Too many turns."}}
    _t, events = _run(failed)
    assert events == [{"type": "RUN_ERROR", "message": "Too many turns.", "code": "max_turns"}]


def test_approval_requests_are_the_interrupts_of_the_pause():
    request = {
        "type": "approval.requested",
        "call_id": "c1",
        "name": "send_payment",
        "description": "Send money.",
        "arguments": '{"amount": 5}',
        "expires_at": "2026-12-06T01:00:00+00:00",
    }
    t, events = _run(request)
    assert events == []
    [finished] = [e.model_dump(by_alias=True, mode="json") for e in t.pause()]
    EVENT.validate_python(finished)
    [interrupt] = finished["outcome"]["interrupts"]
    assert (interrupt["id"], interrupt["toolCallId"], interrupt["message"]) == (
        "c1",
        "c1",
        "Send money.",
    )
    assert interrupt["expiresAt"] == "2026-12-06T01:00:00+00:00"
    assert interrupt["metadata"] == {"name": "send_payment", "arguments": '{"amount": 5}'}


def test_another_runs_frames_and_frames_after_the_end_are_ignored():
    translation = Translation("thread-1", "client-run")
    assert translation.events({"type": "text.delta", "run_id": "x", "seq": 2, "delta": "a"}) == []
    translation.follow("ours")
    assert translation.events({"type": "text.delta", "run_id": "x", "seq": 2, "delta": "a"}) == []
    translation.events({"type": "run.cancelled", "run_id": "ours", "seq": 3})
    assert (
        translation.events({"type": "text.delta", "run_id": "ours", "seq": 4, "delta": "a"}) == []
    )
