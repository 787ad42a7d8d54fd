"""A message posted during a reply through the HTTP stream's views, with
``WHILE_RUNNING = "steer"``: the POST answers 202 with ``steer.accepted``, the stream
shows the message where it entered the run, then the reply to it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests import chat_agent, steer_agent
from tests.conversations import run_statuses
from tests.sse.client import post
from tests.sse.views_helpers import opened, url

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_posted_message_joins_the_reply(
    use_agent: Any, alice_cookie: bytes, session_id: str
) -> None:
    use_agent("tests.steer_agent.make_agent", WHILE_RUNNING="steer")
    model = steer_agent.script()
    chat_agent.tool_gate = gate = asyncio.Event()
    try:
        stream, _history = await opened(session_id, alice_cookie)
        assert (await post(url(session_id, "messages/"), {"text": "Weather?"}, alice_cookie))[
            0
        ] == 202
        await stream.frames_until("item.completed")  # the message
        await stream.frames_until("item.completed")  # the tool call
        fields = {"text": "And Rome?", "client_id": "c-2"}
        status, body = await post(url(session_id, "messages/"), fields, alice_cookie)
        assert status == 202
        assert (body["accepted"], body["type"], body["client_id"]) == (
            "user_message",
            "steer.accepted",
            "c-2",
        )
        gate.set()
        frames = await stream.frames_until("run.completed")
    finally:
        gate.set()
        chat_agent.tool_gate = None
    items = [f["item"] for f in frames if f["type"] == "item.completed"]
    assert [(i.get("role"), i.get("text")) for i in items][-2:] == [
        ("user", "And Rome?"),
        ("assistant", "Heard: And Rome?"),
    ]
    assert model.calls[1].input[-1] == {"role": "user", "content": "And Rome?"}
    assert await run_statuses(session_id) == ["completed"]
    await stream.close()
