"""The queue's frames (``WHILE_RUNNING = "queue"``) through the real consumer, each
validated against the schema: a message queued during a reply (``conversation.queue``),
a reload's history listing it, ``queue_edit`` and ``queue_remove`` and their errors, and
the queued message sent as the next run once the reply ends."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests import chat_agent
from tests.scripted import streamed_reply
from tests.streaming.wire.test_protocol import CLIENT, SERVER, problems
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_the_queue_frames_validate(use_agent: Any, alice_cookie: bytes, session_id: str):
    use_agent("tests.chat_agent.make_agent", WHILE_RUNNING="queue")
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("A long answer.", gate=gate), streamed_reply("Second."))
    sent: list[dict[str, Any]] = []
    tab = Socket(session_id, alice_cookie)
    await tab.open()

    async def send(frame: dict[str, Any]) -> None:
        sent.append(frame)
        await tab.send(frame)

    await send({"type": "user_message", "text": "One", "client_id": "c-1"})
    await tab.until("text.delta")
    await send({"type": "user_message", "text": "Tow", "client_id": "c-2"})
    await send({"type": "user_message", "text": "Three", "client_id": "c-3"})
    await tab.until("conversation.queue")
    queued = (await tab.until("conversation.queue"))[-1]["queued"]
    assert [m["text"] for m in queued] == ["Tow", "Three"]
    reloaded = Socket(session_id, alice_cookie)
    assert [m["client_id"] for m in (await reloaded.open())["queued"]] == ["c-2", "c-3"]
    two, three = queued
    await send({"type": "queue_edit", "id": two["id"], "text": "Two"})
    assert [m["text"] for m in (await tab.until("conversation.queue"))[-1]["queued"]] == [
        "Two",
        "Three",
    ]
    await send({"type": "queue_remove", "id": three["id"]})
    assert [m["text"] for m in (await tab.until("conversation.queue"))[-1]["queued"]] == ["Two"]
    await send({"type": "queue_remove", "id": three["id"]})
    assert (await tab.until("error"))[-1]["code"] == "unknown_queued"
    gate.set()
    await tab.until("run.completed")
    frames = await tab.until("run.completed")
    started = next(f for f in frames if f["type"] == "item.completed")
    assert (started["item"]["text"], started["item"]["client_id"]) == ("Two", "c-2")
    assert any(f["type"] == "conversation.queue" and f["queued"] == [] for f in frames)
    received = tab.received + reloaded.received
    failures = {json.dumps(f)[:300]: problems(SERVER, f) for f in received if problems(SERVER, f)}
    assert failures == {}
    assert [problems(CLIENT, frame) for frame in sent] == [[]] * len(sent)
