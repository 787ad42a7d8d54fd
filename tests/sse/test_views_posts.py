"""The SSE transport's POSTs through Django's real ASGI handler: messages, cancels,
approvals and older history, who may send them, and the errors they answer with."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions.store import uploads
from tests import approval_agent, chat_agent
from tests.attachment_helpers import data_url, png
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.sse.client import EventStream, post
from tests.sse.views_helpers import agent_settings, opened, url  # noqa: F401
from tests.streaming.wire.test_protocol import SERVER, problems

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"text": "  "}, 400, "empty_text"),
        (b"{not json", 400, "invalid_json"),
        (b"\xff\xfe", 400, "invalid_json"),
        ([1, 2], 400, "invalid_frame"),
        ({"text": "x" * 70_000}, 413, "too_large"),
        ({"text": "hi", "client_id": 5}, 400, "invalid_frame"),
        ({"text": "half \ud83d emoji"}, 400, "invalid_text"),
    ],
)
async def test_a_bad_message_is_refused_with_its_code_and_nothing_is_stored(
    alice_cookie, session_id, body, status, code
):
    answer = await post(url(session_id, "messages/"), body, alice_cookie)
    assert answer[0] == status
    assert (answer[1]["type"], answer[1]["code"]) == ("error", code)
    assert problems(SERVER, answer[1]) == []
    assert await run_statuses(session_id) == []


async def test_busy_rate_limited_and_unknown_approval_have_their_statuses(
    settings, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RATE_LIMIT": "1/m"}
    chat_agent.script(streamed_reply("and on " * 200, delay=0.01), streamed_reply("ok"))
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "a"}, alice_cookie))[0] == 202
    await stream.frames_until("run.started", "history")
    status, body = await post(
        url(session_id, "messages/"), {"text": "b", "client_id": "c2"}, alice_cookie
    )
    assert (status, body["code"], body["client_id"]) == (409, "busy", "c2")
    assert (await post(url(session_id, "cancel/"), {}, alice_cookie))[0] == 202
    await stream.frames_until("run.cancelled")
    status, body = await post(url(session_id, "messages/"), {"text": "c"}, alice_cookie)
    assert (status, body["code"]) == (429, "rate_limited")
    assert body["retry_after"] > 0
    status, body = await post(url(session_id, "approvals/call-x/"), {"approve": True}, alice_cookie)
    assert (status, body["code"]) == (404, "unknown_approval")
    status, body = await post(
        url(session_id, "approvals/call-x/"), {"approve": "yes"}, alice_cookie
    )
    assert (status, body["code"]) == (400, "invalid_approval")


async def test_who_may_post_and_stream(alice_cookie, bob_cookie, session_id):
    chat_agent.script(streamed_reply("mine"))
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, None))[0] == 401
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, alice_cookie, csrf=False))[
        0
    ] == 403
    assert await run_statuses(session_id) == []
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, alice_cookie))[0] == 202
    await stream.frames_until("run.completed")
    # Bob may neither read nor write Alice's conversation.
    assert await EventStream(url(session_id, "events/"), bob_cookie).status() == 403
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, bob_cookie))[0] == 403
    assert await EventStream(url(session_id, "events/"), None).status() == 401


async def test_approve_stop_and_load_older_over_http(alice_cookie, session_id):
    two_payments = streamed_reply("", tool_calls=approval_agent.two_payments())
    chat_agent.script(two_payments, streamed_reply("Paid."))
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "pay"}, alice_cookie))[0] == 202
    await stream.frames_until("approval.requested")
    await stream.frames_until("approval.requested")
    for call_id, approve in (("call-ann", True), ("call-bob", False)):
        decision = {"approve": approve, "message": "" if approve else "no"}
        status, _body = await post(url(session_id, f"approvals/{call_id}/"), decision, alice_cookie)
        assert status == 202
    await stream.frames_until("run.completed")
    assert approval_agent.EXECUTED == ["ann"]
    status, page = await _get_json(url(session_id, "older/?before=1"), alice_cookie)
    assert (status, page["type"], page["items"]) == (200, "history.page", [])


async def _get_json(path: str, cookie: bytes) -> tuple[int, Any]:
    stream = EventStream(path, cookie)
    status = await stream.status()
    body = b""
    while (chunk := await asyncio.wait_for(stream.response.chunks.get(), 10)) is not None:
        body += chunk
    await stream.close()
    return status, json.loads(body)


async def test_a_message_with_files_over_http_reaches_the_model_and_the_stream(
    alice, alice_cookie, session_id, file_storage
):
    image = png(6, 6)
    accept = sync_to_async(uploads.accept)
    stored = await accept(alice, session_id, name="p.png", data=image, content_type="image/png")
    model = chat_agent.script(streamed_reply("A small square."))
    stream, _ = await opened(session_id, alice_cookie)
    body = {"text": "What is it?", "files": [stored.id]}
    assert (await post(url(session_id, "messages/"), body, alice_cookie))[0] == 202
    frames = await stream.frames_until("run.completed")
    user_item = next(f["item"] for f in frames if f["type"] == "item.completed")
    assert user_item["files"] == [stored.wire()]
    assert model.last_call is not None
    assert model.last_call.input[-1]["content"][1]["image_url"] == data_url(image)
    refused = await post(url(session_id, "messages/"), {"text": "x", "files": [999]}, alice_cookie)
    assert (refused[0], refused[1]["code"]) == (400, "unknown_file")
    await stream.close()
