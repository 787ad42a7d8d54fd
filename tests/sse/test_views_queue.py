"""Queued messages through the HTTP stream's views (``WHILE_RUNNING = "queue"``): a POST
during a reply answers 202 and the stream shows the queue; ``queue/<id>/`` edits and
``queue/<id>/remove/`` removes it (404 once it is not queued, or for someone else); it is
sent as the next run when the reply ends."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests import chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.sse.client import post
from tests.sse.views_helpers import opened, url

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_message_posted_during_a_reply_is_queued_edited_and_sent(
    use_agent: Any, alice_cookie: bytes, bob_cookie: bytes, session_id: str
) -> None:
    use_agent("tests.chat_agent.make_agent", WHILE_RUNNING="queue")
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("A long answer.", gate=gate), streamed_reply("Second."))
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "One"}, alice_cookie))[0] == 202
    await stream.frames_until("text.delta")
    for text in ("Tow", "Three"):
        posted = await post(url(session_id, "messages/"), {"text": text}, alice_cookie)
        assert posted[0] == 202
    await stream.frames_until("conversation.queue")
    two, three = (await stream.frames_until("conversation.queue"))[-1]["queued"]
    status, body = await post(url(session_id, f"queue/{two['id']}/"), {"text": "Mine"}, bob_cookie)
    assert status == 403  # not bob's conversation
    edited = await post(url(session_id, f"queue/{two['id']}/"), {"text": "Two"}, alice_cookie)
    assert edited[0] == 202
    removed = await post(url(session_id, f"queue/{three['id']}/remove/"), {}, alice_cookie)
    assert removed[0] == 202
    status, body = await post(url(session_id, f"queue/{three['id']}/remove/"), {}, alice_cookie)
    assert (status, body["code"]) == (404, "unknown_queued")
    shown = (await stream.frames_until("conversation.queue"))[-1]["queued"]
    shown = (await stream.frames_until("conversation.queue"))[-1]["queued"]
    assert [m["text"] for m in shown] == ["Two"]
    gate.set()
    await stream.frames_until("run.completed")
    frames = await stream.frames_until("run.completed")
    said = [f["item"]["text"] for f in frames if f["type"] == "item.completed"]
    assert said[0] == "Two"
    assert await run_statuses(session_id) == ["completed", "completed"]
    await stream.close()
