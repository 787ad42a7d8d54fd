"""``ChatStream``: the frames a follower gives, as one run's chunks: the request's run
only, its recovery from a history frame, and the text that goes out."""

from __future__ import annotations

import json
from typing import Any

from channels.layers import get_channel_layer
from django.contrib.auth.models import User

from django_agent_sessions.protocols.ai_sdk.parts import PartWriter
from django_agent_sessions.protocols.ai_sdk.stream import ChatStream, chunk_text
from django_agent_sessions.streaming import Visitor


def written(stream: ChatStream) -> list[Any]:
    out: list[Any] = []
    while not stream._body.out.empty():
        text = stream._body.out.get_nowait()
        if text is None:
            out.append(None)
        else:
            data = text.removeprefix("data: ").strip()
            out.append(data if data == "[DONE]" else json.loads(data)["type"])
    return out


def stream_of(acting: bool) -> ChatStream:
    visitor = Visitor(User(username="ann"), "conv-1", scope={}, channel_layer=get_channel_layer())
    stream = ChatStream(visitor, "agent_sessions.ai_sdk.test", PartWriter())
    stream._acting = acting
    return stream


async def test_only_the_run_its_request_started_is_followed():
    before = stream_of(acting=False)
    await before._on_frame({"type": "run.started", "run_id": "r0", "seq": 1})
    assert written(before) == []  # a run someone else started before the request acted
    stream = stream_of(acting=True)
    await stream._on_frame({"type": "run.started", "run_id": "r1", "seq": 1})
    await stream._on_frame({"type": "text.delta", "run_id": "r2", "seq": 2, "delta": "x"})
    await stream._on_frame({"type": "text.delta", "run_id": "r1", "seq": 2, "delta": "Hi"})
    await stream._on_frame({"type": "run.completed", "run_id": "r1", "seq": 3})
    assert written(stream) == [
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
        "[DONE]",
        None,
    ]


async def test_a_history_frame_while_following_ends_the_run_as_stored():
    stream = stream_of(acting=True)
    await stream._on_frame({"type": "run.started", "run_id": "r1", "seq": 1})
    await stream._on_frame({"type": "text.delta", "run_id": "r1", "seq": 2, "delta": "Hal"})
    note = {"kind": "message", "role": "assistant", "text": "Half", "id": None, "run_id": "r1"}
    history = {"type": "history", "active_run": None, "pending_approvals": []}
    await stream._on_frame({**history, "items": [{**note, "status": "cancelled"}]})
    shown = ["text-delta", "text-end", "finish-step", "abort", "finish", "[DONE]", None]
    assert written(stream)[-7:] == shown  # "f": what the deltas lacked of the stored text
    assert stream.writer.ended


def test_chunks_are_ascii_json_events():
    assert chunk_text({"type": "text-delta", "delta": "é\ud800"}) == (
        'data: {"type":"text-delta","delta":"\\u00e9\\ud800"}\n\n'
    )
