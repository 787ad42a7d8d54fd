"""``queue_frames``: ``queue_edit`` and ``queue_remove`` name a queued message by its id,
an edit carries text that is not only whitespace and can be stored."""

from __future__ import annotations

from typing import Any

import pytest

from django_agent_sessions.streaming.wire import queue_frames
from django_agent_sessions.streaming.wire.frames import BadFrame


def test_good_frames_give_their_values() -> None:
    assert queue_frames.queued_id({"id": 3}) == 3
    assert queue_frames.queue_edit({"id": 3, "text": "Two"}) == queue_frames.QueueEdit(3, "Two")


@pytest.mark.parametrize("pk", [None, 0, -1, True, "3", 1.5])
def test_an_id_that_names_no_queued_message_is_invalid(pk: Any) -> None:
    with pytest.raises(BadFrame) as refused:
        queue_frames.queued_id({"id": pk})
    assert refused.value.code == "invalid_frame"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (None, "empty_text"),
        (" ", "empty_text"),
        ("a\x00b", "invalid_text"),
        ("\ud800", "invalid_text"),
    ],
)
def test_an_edit_needs_text_that_can_be_stored(text: Any, code: str) -> None:
    with pytest.raises(BadFrame) as refused:
        queue_frames.queue_edit({"id": 1, "text": text})
    assert refused.value.code == code
