"""The adapter's endpoints through Django's real ASGI handler: a message's run streamed
as the protocol's chunks, loaded back as the same message, resumed, stopped, refused."""

from __future__ import annotations

import pytest

from tests import chat_agent
from tests.conversations import run_statuses
from tests.protocols.ai_sdk.asgi_client import get, send, user_message
from tests.protocols.ai_sdk.views_helpers import agent_settings, closing_calls, text_of, types  # noqa: F401
from tests.scripted import streamed_reply, tool_turn
from tests.sse.client import EventStream, post

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "Sunny in Paris today, around twenty-one degrees."


async def test_a_message_streams_its_run_as_chunks_and_loads_back(alice_cookie, session_id):
    chat_agent.script(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-1"),
        streamed_reply(ANSWER, delay=0.002),
    )
    call = send(session_id, alice_cookie, user_message("Weather?", "m-1"))
    assert await call.status() == 200
    assert call.response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert call.response.headers["content-type"].startswith("text/event-stream")
    chunks = await call.body()
    run_id = chunks[0]["messageId"]
    assert chunks[0] == {"type": "start", "messageId": run_id}
    assert types(chunks)[:4] == ["start", "start-step", "tool-input-start", "tool-input-available"]
    assert chunks[3]["input"] == {"city": "Paris"}
    assert types(chunks)[4:7] == ["tool-output-available", "finish-step", "start-step"]
    assert chunks[4] == {
        "type": "tool-output-available",
        "toolCallId": "call-1",
        "output": "sunny in Paris",
    }
    assert text_of(chunks) == ANSWER
    assert types(chunks)[-4:] == ["text-end", "finish-step", "finish", "[DONE]"]
    assert chunks[-2] == {"type": "finish", "finishReason": "stop"}
    assert await run_statuses(session_id) == ["completed"]

    loaded = await get(session_id, "messages", alice_cookie).body()
    assert loaded == [
        {"id": "m-1", "role": "user", "parts": [{"type": "text", "text": "Weather?"}]},
        {
            "id": run_id,
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "tool-get_weather",
                    "toolCallId": "call-1",
                    "state": "output-available",
                    "input": {"city": "Paris"},
                    "output": "sunny in Paris",
                },
                {"type": "step-start"},
                {"type": "text", "text": ANSWER, "state": "done"},
            ],
        },
    ]


async def test_the_packaged_chat_and_use_chat_open_each_other_s_conversations(
    alice_cookie, session_id
):
    chat_agent.script(streamed_reply("From useChat."), streamed_reply("From the chat."))
    chunks = await send(session_id, alice_cookie, user_message("Hi", "m-1")).body()
    assert chunks[-2] == {"type": "finish", "finishReason": "stop"}
    # The packaged chat (over SSE here) opens it, and sends the next message in it.
    chat = EventStream(f"/chat/c/{session_id}/events/", alice_cookie)
    assert (await chat.frame())["type"] == "history"
    assert (await post(f"/chat/c/{session_id}/messages/", {"text": "And?"}, alice_cookie))[0] == 202
    await chat.frames_until("run.completed")
    await chat.close()
    reopened = EventStream(f"/chat/c/{session_id}/events/", alice_cookie)
    history = await reopened.frame()
    await reopened.close()
    shown = [(item["role"], item["text"]) for item in history["items"]]
    assert shown == [
        ("user", "Hi"),
        ("assistant", "From useChat."),
        ("user", "And?"),
        ("assistant", "From the chat."),
    ]
    loaded = await get(session_id, "messages", alice_cookie).body()
    texts = [(m["role"], [p["text"] for p in m["parts"] if p["type"] == "text"]) for m in loaded]
    assert texts == [
        ("user", ["Hi"]),
        ("assistant", ["From useChat."]),
        ("user", ["And?"]),
        ("assistant", ["From the chat."]),
    ]
    assert loaded[0]["id"] == "m-1"
    assert [m["id"] for m in loaded[1::2]] == [i["run_id"] for i in history["items"][1::2]]
