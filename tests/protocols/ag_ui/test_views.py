"""The AG-UI endpoint through Django's real ASGI handler: a run streamed as AG-UI
events (each validated by the protocol's models), its tool call and result, the stored
history the packaged chat shows, and what is refused before and inside the stream."""

from __future__ import annotations

import pytest

from tests import chat_agent
from tests.conversations import run_statuses
from tests.protocols.ag_ui.requests import AgUiRequest, run_input, text_of, types
from tests.scripted import streamed_reply, tool_turn

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "Sunny in Paris today, around twenty-one degrees, with a gentle western breeze."


async def test_a_message_streams_its_run_as_ag_ui_events(alice_cookie, session_id):
    chat_agent.script(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-1"),
        streamed_reply(ANSWER, delay=0.002),
    )
    body = run_input(session_id, "Weather in Paris?")
    request = AgUiRequest(body, alice_cookie)
    assert await request.status() == 200
    assert request.response.headers["content-type"] == "text/event-stream"
    events = await request.events()
    assert types(events)[:4] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    ]
    assert events[0] == {"type": "RUN_STARTED", "threadId": session_id, "runId": body["runId"]}
    start, args, _end, result = events[1:5]
    assert (start["toolCallId"], start["toolCallName"]) == ("call-1", "get_weather")
    assert args["delta"] == '{"city": "Paris"}' or args["delta"] == '{"city":"Paris"}'
    assert (result["type"], result["toolCallId"]) == ("TOOL_CALL_RESULT", "call-1")
    assert result["content"] == "sunny in Paris"
    assert types(events)[5] == "TEXT_MESSAGE_START"
    assert types(events)[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    # The reply streamed in several pieces that add up to it.
    assert types(events).count("TEXT_MESSAGE_CONTENT") > 1
    assert text_of(events) == ANSWER
    finished = events[-1]
    assert (finished["threadId"], finished["runId"], finished["result"]) == (
        session_id,
        body["runId"],
        ANSWER,
    )
    assert finished["usage"][0]["totalTokens"] > 0
    assert await run_statuses(session_id) == ["completed"]


async def test_the_thread_opens_as_a_snapshot_of_the_stored_history(alice_cookie, session_id):
    chat_agent.script(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-1"),
        streamed_reply(ANSWER),
    )
    sent = run_input(session_id, "Weather in Paris?")
    await AgUiRequest(sent, alice_cookie).events()
    events = await AgUiRequest(run_input(session_id), alice_cookie).events()
    assert types(events) == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    shown = events[1]["messages"]
    assert [m["role"] for m in shown] == ["user", "assistant", "tool", "assistant"]
    # The person's message keeps the id the client gave it.
    assert shown[0] == {
        "id": sent["messages"][0]["id"],
        "role": "user",
        "content": "Weather in Paris?",
    }
    assert shown[1]["toolCalls"][0]["id"] == "call-1"
    assert shown[1]["toolCalls"][0]["function"]["name"] == "get_weather"
    assert (shown[2]["toolCallId"], shown[2]["content"]) == ("call-1", "sunny in Paris")
    assert shown[3]["content"] == ANSWER


async def test_a_new_thread_opens_empty_and_writes_nothing(alice_cookie, session_id):
    events = await AgUiRequest(run_input(session_id), alice_cookie).events()
    assert types(events) == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert events[1]["messages"] == []
    assert await run_statuses(session_id) == []


async def test_a_message_while_a_run_goes_on_is_busy(alice_cookie, session_id):
    chat_agent.script(streamed_reply("on and on " * 40, delay=0.01))
    first = AgUiRequest(run_input(session_id, "Talk"), alice_cookie)
    await first.events_until("TEXT_MESSAGE_CONTENT")
    events = await AgUiRequest(run_input(session_id, "Again"), alice_cookie).events()
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[1]["code"] == "busy"
    assert types(await first.events())[-1] == "RUN_FINISHED"


async def test_another_users_thread_is_refused_and_shows_nothing(
    alice_cookie, bob_cookie, session_id
):
    chat_agent.script(streamed_reply(ANSWER))
    await AgUiRequest(run_input(session_id, "Mine"), alice_cookie).events()
    for body in (run_input(session_id, "Theirs?"), run_input(session_id)):
        request = AgUiRequest(body, bob_cookie)
        assert await request.status() == 403
        assert "Mine" not in await request.text()
    assert await run_statuses(session_id) == ["completed"]


async def test_without_csrf_or_signed_out_nothing_runs(alice_cookie, session_id):
    request = AgUiRequest(run_input(session_id, "Hi"), alice_cookie, csrf=False)
    assert await request.status() == 403
    request = AgUiRequest(run_input(session_id, "Hi"), None)
    assert await request.status() == 401
    assert await run_statuses(session_id) == []


async def test_a_body_that_is_not_a_run_agent_input_is_a_400(alice_cookie, session_id):
    for body in (b"{", {"threadId": session_id}, {**run_input(session_id), "messages": 3}):
        request = AgUiRequest(body, alice_cookie)
        assert await request.status() == 400
    assert await run_statuses(session_id) == []
