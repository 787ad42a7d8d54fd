"""``frames``: the client's frames checked before anything happens; each refusal is a
``BadFrame`` carrying the wire's error code (and the client's id, when it sent one)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from django_agent_sessions.store.approvals import MAX_MESSAGE_CHARS
from django_agent_sessions.streaming.wire import frames
from django_agent_sessions.streaming.wire.frames import BadFrame


def code_of(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(BadFrame) as refused:
        call(*args, **kwargs)
    return refused.value.code


def test_decode_accepts_a_json_object_of_a_known_type() -> None:
    for kind in ("user_message", "cancel", "approval", "load_older"):
        text = json.dumps({"type": kind, "x": 1})
        assert frames.decode(text, max_bytes=100) == {"type": kind, "x": 1}


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (None, "invalid_frame"),  # a binary frame
        ("{not json", "invalid_json"),
        ("[" * 100_000 + "]" * 100_000, "too_large"),  # checked before parsing
        ("[" * 5_000 + "]" * 5_000, "invalid_json"),  # nesting past the parser's recursion
        ("[1, 2]", "invalid_frame"),
        ('{"text": "no type"}', "invalid_frame"),
        ('{"type": 3}', "invalid_frame"),
        ('{"type": "delete_everything"}', "unknown_type"),
    ],
)
def test_decode_refuses_what_is_no_frame(text: str | None, code: str) -> None:
    assert code_of(frames.decode, text, max_bytes=64_000) == code


def test_the_size_limit_counts_utf8_bytes_not_characters() -> None:
    frame = json.dumps({"type": "cancel", "pad": "é" * 40}, ensure_ascii=False)
    assert len(frame) <= 80 < len(frame.encode())
    assert code_of(frames.decode_object, frame, 80) == "too_large"
    assert frames.decode_object(frame, len(frame.encode()))["type"] == "cancel"


def test_a_user_message_needs_text_that_can_be_stored_and_relayed() -> None:
    message = frames.user_message({"text": "Hello", "client_id": "c-1"})
    assert (message.text, message.client_id) == ("Hello", "c-1")
    assert frames.user_message({"text": "Hi"}).client_id == ""
    with pytest.raises(BadFrame) as refused:
        frames.user_message({"text": "  \n", "client_id": "c-2"})
    # The error names the message it refuses, so the page can mark that one.
    assert (refused.value.code, refused.value.client_id) == ("empty_text", "c-2")
    for text in ("half an emoji \ud83d", "a NUL \x00 here"):
        assert code_of(frames.user_message, {"text": text}) == "invalid_text"
    assert code_of(frames.user_message, {"text": 5}) == "empty_text"


@pytest.mark.parametrize("client_id", ["", "x" * 65, 7, "line\nbreak"])
def test_a_client_id_is_a_short_printable_string(client_id: Any) -> None:
    assert code_of(frames.user_message, {"text": "Hi", "client_id": client_id}) == "invalid_frame"
    assert frames.user_message({"text": "Hi", "client_id": "x" * 64}).client_id == "x" * 64


def test_an_approval_needs_a_call_id_a_boolean_and_a_short_message() -> None:
    decided = frames.approval({"call_id": "call-1", "approve": False, "message": "No."})
    assert decided == frames.Approval("call-1", False, "No.")
    assert frames.approval({"call_id": "call-1", "approve": True}).message == ""
    for content in (
        {"approve": True},
        {"call_id": "", "approve": True},
        {"call_id": "c" * 256, "approve": True},
        {"call_id": "call-1", "approve": "yes"},
        {"call_id": "call-1", "approve": 1},
        {"call_id": "call-1", "approve": True, "message": None},
        {"call_id": "call-1", "approve": True, "message": "m" * (MAX_MESSAGE_CHARS + 1)},
    ):
        assert code_of(frames.approval, content) == "invalid_approval", content


def test_a_cancel_names_a_run_or_none_never_something_else() -> None:
    assert frames.cancel({}) is None
    assert frames.cancel({"run_id": "r-1"}) == "r-1"
    # Not read as "no run_id": a cancel meant for one run must never stop another.
    assert code_of(frames.cancel, {"run_id": 12}) == "invalid_frame"


@pytest.mark.parametrize("before", [None, 0, -3, "12", True, 1.5])
def test_load_older_needs_an_item_id(before: Any) -> None:
    assert code_of(frames.load_older, {"before": before}) == "invalid_frame"
    assert frames.load_older({"before": 12}) == 12


def test_error_frames_carry_code_message_client_id_and_extra_fields() -> None:
    assert frames.error_frame("busy", "Wait.") == {
        "type": "error",
        "code": "busy",
        "message": "Wait.",
    }
    limited = frames.error_frame("rate_limited", "Slow down.", "c-1", retry_after=30)
    assert limited == {
        "type": "error",
        "code": "rate_limited",
        "message": "Slow down.",
        "retry_after": 30,
        "client_id": "c-1",
    }
    busy = frames.busy("c-9")
    assert (busy.code, busy.client_id, str(busy)) == ("busy", "c-9", busy.message)
    extra = BadFrame("unavailable", "Later.", retry_after=1)
    assert frames.error_frame(extra.code, extra.message, extra.client_id, **extra.fields) == {
        "type": "error",
        "code": "unavailable",
        "message": "Later.",
        "retry_after": 1,
    }
