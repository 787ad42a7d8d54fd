"""Stop and resume through the adapter: an aborted response cancels its run with a
valid history (or leaves it running when runs continue after a disconnect), and
``GET .../stream`` replays the run in flight from its start, or answers 204."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from django_agent_sessions import DjangoSession
from tests import chat_agent
from tests.conversations import run_statuses
from tests.protocols.ai_sdk.asgi_client import Call, get, send, user_message
from tests.protocols.ai_sdk.views_helpers import agent_settings, closing_calls, text_of, types  # noqa: F401
from tests.scripted import streamed_reply, tool_turn

pytestmark = pytest.mark.django_db(transaction=True)

LONG = "and so the story goes on " * 40


async def statuses_become(session_id: str, wanted: list[str]) -> list[str]:
    """The runs' statuses once they are ``wanted`` (or the last seen, after 10 s)."""
    for _attempt in range(1000):
        if (found := await run_statuses(session_id)) == wanted:
            break
        await asyncio.sleep(0.01)
    return found


def unanswered_calls(items: list[Any]) -> set[str]:
    calls = {item["call_id"] for item in items if item.get("type") == "function_call"}
    return calls - {item["call_id"] for item in items if item.get("type") == "function_call_output"}


async def test_an_aborted_response_stops_its_run_with_a_valid_history(alice_cookie, session_id):
    gate = asyncio.Event()
    chat_agent.tool_gate = gate  # the tool's call stays open until the stop
    try:
        chat_agent.script(tool_turn("get_weather", {"city": "Oslo"}, call_id="call-1"))
        call = send(session_id, alice_cookie, user_message("Weather?"))
        await call.chunks_until("tool-input-available")
        await call.close()  # useChat's stop(): the fetch is aborted
        assert await statuses_become(session_id, ["cancelled"]) == ["cancelled"]
    finally:
        chat_agent.tool_gate = None
    stored = await DjangoSession(session_id).get_items()
    assert unanswered_calls(stored) == set()
    loaded = await get(session_id, "messages", alice_cookie).body()
    # The turn in flight was dropped (the SDK's immediate cancel): the person's message
    # stays, and nothing of a reply that never was.
    assert stored == [{"content": "Weather?", "role": "user"}]
    assert loaded == [
        {"id": "msg-1", "role": "user", "parts": [{"type": "text", "text": "Weather?"}]}
    ]


async def test_with_runs_continuing_a_reload_resumes_the_run_from_its_start(
    alice_cookie, session_id, settings
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "CONTINUE_RUNS_AFTER_DISCONNECT": True}
    chat_agent.script(streamed_reply(LONG, delay=0.005))
    call = send(session_id, alice_cookie, user_message("Tell me a story"))
    first = await call.chunks_until("text-delta")
    await call.close()  # a reload
    resumed = get(session_id, "stream", alice_cookie)
    assert await resumed.status() == 200
    assert resumed.response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    chunks = await resumed.body()
    # The same message, from its beginning: the client replaces what it had.
    assert chunks[0] == first[0]
    assert text_of(chunks) == LONG
    assert types(chunks)[-3:] == ["finish-step", "finish", "[DONE]"]
    assert await run_statuses(session_id) == ["completed"]
    assert (await get(session_id, "stream", alice_cookie).status()) == 204


async def test_the_explicit_stop_cancels_a_run_that_continues_after_a_disconnect(
    alice_cookie, session_id, settings
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "CONTINUE_RUNS_AFTER_DISCONNECT": True}
    chat_agent.script(streamed_reply(LONG, delay=0.005))
    call = send(session_id, alice_cookie, user_message("Tell me a story"))
    await call.chunks_until("text-delta")
    stopped = Call("POST", f"/ai-sdk/chat/{session_id}/cancel", alice_cookie, {})
    assert await stopped.body() == {"accepted": "cancel"}
    chunks = await call.body()
    assert types(chunks)[-3:] == ["abort", "finish", "[DONE]"]
    assert await run_statuses(session_id) == ["cancelled"]


async def test_nothing_to_resume_is_204_and_a_new_chat_loads_empty(alice_cookie, session_id):
    assert await get(session_id, "stream", alice_cookie).status() == 204
    assert await get(session_id, "messages", alice_cookie).body() == []
    assert await run_statuses(session_id) == []  # opening a new id writes nothing
