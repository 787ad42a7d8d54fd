"""What sockets are shown and told is true: text with lone surrogates is refused on the
way in and shown safely on the way out, the history frame stays within its byte budget
with older items paged on demand, stopped and failed replies are in history as such,
and errors echo the client's id (rate_limited also says when to retry).

In-process, over the real middleware stack (and Redis when ``REDIS_URL`` is set).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, SessionItem
from django_agent_sessions.rendering import render_markdown
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.websocket.run_truth_helpers import LONG, agent_settings  # noqa: F401 - fixture
from tests.websockets import Socket, of_type

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


# 5. Lone surrogates ----------------------------------------------------------------------


async def test_a_lone_surrogate_is_refused_before_anything_is_recorded(alice_cookie, session_id):
    chat_agent.script(streamed_reply("fine", delay=0.0))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.communicator.send_to(
        text_data='{"type": "user_message", "text": "x \\ud800 y", "client_id": "c1"}'
    )
    error = await socket.receive()
    assert (error["type"], error["code"], error["client_id"]) == ("error", "invalid_text", "c1")
    assert await SessionItem.objects.acount() == 0
    assert await AgentRun.objects.acount() == 0
    await socket.say("and now a normal one")
    assert (await socket.until("run.completed", "run.failed"))[-1]["type"] == "run.completed"


async def test_anything_djangosession_stores_can_be_shown(alice, alice_cookie, session_id):
    session = DjangoSession(session_id, owner=alice)
    await session.add_items(
        [{"role": "user", "content": "x \ud800 y"}, {"role": "assistant", "content": "\udfff"}]
    )
    for _ in range(2):  # and again: the conversation is not broken for good
        socket = Socket(session_id, alice_cookie)
        await socket.connect()
        raw = await socket.communicator.receive_from(timeout=5)
        raw.encode("utf-8")  # valid UTF-8: daphne can send it
        history = json.loads(raw)
        assert [item["text"] for item in history["items"]] == ["x \ufffd y", "\ufffd"]
        await socket.close()
    assert await session.get_items() == [
        {"role": "user", "content": "x \ud800 y"},
        {"role": "assistant", "content": "\udfff"},
    ]


# 6. The history frame has a byte budget; older items are paged ---------------------------


async def test_history_frame_is_bounded_and_older_items_are_paged(
    settings, alice, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "HISTORY_MAX_BYTES": 20_000}
    session = DjangoSession(session_id, owner=alice)
    texts = [f"{n:04d} " + "x" * 1000 for n in range(120)]
    await session.add_items([{"role": "user", "content": text} for text in texts])
    socket = Socket(session_id, alice_cookie)
    await socket.connect()
    raw = await socket.communicator.receive_from(timeout=5)
    assert len(raw.encode()) < 20_000 + 1_000
    frame = json.loads(raw)
    assert frame["has_more"] is True
    seen = [item["text"] for item in frame["items"]]
    before = frame["oldest_id"]
    pages = 0
    while True:
        await socket.send({"type": "load_older", "before": before})
        page = await socket.receive()
        assert page["type"] == "history.page"
        assert len(json.dumps(page["items"]).encode()) < 20_000 + 1_000
        seen = [item["text"] for item in page["items"]] + seen
        pages += 1
        if not page["has_more"]:
            break
        before = page["oldest_id"]
    assert seen == texts
    assert pages >= 5


# 8. History tells what happened -----------------------------------------------------------


async def test_a_stopped_reply_is_in_history_with_its_text_and_status(alice_cookie, session_id):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply(LONG, delay=0.001, gate=gate), streamed_reply("Next."))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.send({"type": "user_message", "text": "tell me a story", "client_id": "m-1"})
    frames = await socket.until("text.delta")
    run_id = frames[0]["run_id"]
    assert of_type(frames, "item.completed")[0]["item"]["client_id"] == "m-1"
    await socket.send({"type": "cancel"})
    frames += await socket.until("run.cancelled")
    gate.set()
    streamed = "".join(frame["delta"] for frame in of_type(frames, "text.delta"))
    assert streamed

    history = await Socket(session_id, alice_cookie).open()
    user, note = history["items"]
    assert (user["text"], user["run_id"], user["client_id"]) == (
        "tell me a story",
        run_id,
        "m-1",
    )
    assert isinstance(user["id"], int)
    assert user["created_at"]
    assert note == {
        "kind": "message",
        "role": "assistant",
        "text": streamed,
        "html": render_markdown(streamed),
        "status": "cancelled",
        "id": None,
        "created_at": None,
        "run_id": run_id,
    }

    # The session's items stay valid model input: the half reply is not among them.
    items = await DjangoSession(session_id).get_items()
    assert items == [{"role": "user", "content": "tell me a story"}]
    # The next run goes after the note.
    await socket.say("go on")
    await socket.until("run.completed")
    history = await Socket(session_id, alice_cookie).open()
    assert [(item["role"], item.get("status")) for item in history["items"]] == [
        ("user", None),
        ("assistant", "cancelled"),
        ("user", None),
        ("assistant", None),
    ]


async def test_a_failed_run_is_in_history_with_its_code(alice_cookie, session_id):
    from agents.testing import ModelStep

    def fail(call: Any) -> Any:
        raise RuntimeError("model exploded")

    chat_agent.script(ModelStep.respond(fail))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("please fail")
    end = (await socket.until("run.failed"))[-1]
    history = await Socket(session_id, alice_cookie).open()
    assert [item["role"] for item in history["items"]] == ["user", "assistant"]
    note = history["items"][-1]
    assert (note["status"], note["error"], note["run_id"]) == (
        "failed",
        {"code": "agent_error"},
        end["run_id"],
    )


# 9. Errors echo the client's id; rate_limited says when to retry ---------------------------


async def test_rate_limited_carries_retry_after_and_client_id(settings, alice_cookie, session_id):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RATE_LIMIT": "1/h"}
    chat_agent.script(streamed_reply("one"))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.send({"type": "user_message", "text": "one", "client_id": "a"})
    await socket.until("run.completed")
    await socket.send({"type": "user_message", "text": "two", "client_id": "b"})
    error = await socket.receive()
    assert (error["code"], error["client_id"]) == ("rate_limited", "b")
    assert 1 <= error["retry_after"] <= 3600
