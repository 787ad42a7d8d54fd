"""The adapter's endpoints through Django's real ASGI handler: a message's run streamed
as the protocol's chunks, loaded back as the same message, resumed, stopped, refused."""

from __future__ import annotations

import pytest

from tests import chat_agent
from tests.conversations import run_statuses
from tests.protocols.ai_sdk.asgi_client import get, send, user_message
from tests.protocols.ai_sdk.views_helpers import agent_settings, closing_calls, text_of, types  # noqa: F401
from tests.scripted import streamed_reply, tool_turn

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
