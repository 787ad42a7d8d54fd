"""A request's stream over a run's life: the client's abort is Stop (the run cancelled,
its history valid, or going on with ``CONTINUE_RUNS_AFTER_DISCONNECT``), tool approvals
as interrupts answered by ``resume``, a thread opened mid-run, refusals in the stream.

The packaged chat's own stream (``tests/sse/client.py``) watches the same conversation
where a test waits for the run's end: the same runs, whichever client started them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from django_agent_sessions import DjangoSession
from tests import approval_agent, chat_agent
from tests.conversations import run_statuses
from tests.protocols.ag_ui.requests import AgUiRequest, run_input, text_of, types
from tests.scripted import streamed_reply, tool_turn
from tests.sse.client import EventStream

pytestmark = pytest.mark.django_db(transaction=True)

LONG = "and so the story goes on " * 40


async def _watching(session_id: str, cookie: bytes) -> EventStream:
    """The packaged chat's stream on the conversation, past its history frame."""
    stream = EventStream(f"/chat/c/{session_id}/events/", cookie)
    assert (await stream.frame())["type"] == "history"
    return stream


def _valid(items: list[Any]) -> bool:
    """Valid model input: every call has its output."""
    calls = {i["call_id"] for i in items if i.get("type") == "function_call"}
    outputs = {i["call_id"] for i in items if i.get("type") == "function_call_output"}
    return calls == outputs


async def test_the_client_going_away_stops_the_run(alice_cookie, session_id):
    chat_agent.script(streamed_reply(LONG, delay=0.01))
    request = AgUiRequest(run_input(session_id, "Tell me a story"), alice_cookie)
    streamed = await request.events_until("TEXT_MESSAGE_CONTENT")
    watcher = await _watching(session_id, alice_cookie)
    await request.close()
    frames = await watcher.frames_until("run.cancelled", "run.completed")
    assert frames[-1]["type"] == "run.cancelled"
    assert await run_statuses(session_id) == ["cancelled"]
    items = await DjangoSession(session_id).get_items()
    assert [i.get("role") for i in items] == ["user"]  # no half-written reply
    assert text_of(streamed) != ""


async def test_stopped_during_a_tool_call_the_history_stays_valid(alice_cookie, session_id):
    chat_agent.script(tool_turn("get_weather", {"city": "Paris"}, call_id="call-9"))
    chat_agent.tool_gate = asyncio.Event()  # the tool waits: the run is mid-call
    request = AgUiRequest(run_input(session_id, "Weather?"), alice_cookie)
    await request.events_until("TOOL_CALL_END")
    watcher = await _watching(session_id, alice_cookie)
    await request.close()
    await watcher.frames_until("run.cancelled")
    assert _valid(await DjangoSession(session_id).get_items())


async def test_with_continue_runs_after_disconnect_the_run_goes_on(
    alice_cookie, session_id, use_agent
):
    use_agent("tests.chat_agent.make_payment_agent", CONTINUE_RUNS_AFTER_DISCONNECT=True)
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("Finished anyway.", gate=gate))
    request = AgUiRequest(run_input(session_id, "Go on"), alice_cookie)
    await request.events_until("TEXT_MESSAGE_CONTENT")
    watcher = await _watching(session_id, alice_cookie)
    await request.close()
    gate.set()
    assert (await watcher.frames_until("run.completed", "run.cancelled"))[-1]["type"] == (
        "run.completed"
    )
    items = await DjangoSession(session_id).get_items()
    assert items[-1]["content"][0]["text"] == "Finished anyway."


async def test_a_thread_opened_mid_run_follows_it_to_its_end(alice_cookie, session_id):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("Half, then the rest.", gate=gate))
    first = AgUiRequest(run_input(session_id, "Hi"), alice_cookie)
    head = await first.events_until("TEXT_MESSAGE_CONTENT")
    second = AgUiRequest(run_input(session_id), alice_cookie)
    opened = await second.events_until("MESSAGES_SNAPSHOT")
    assert [m["role"] for m in opened[1]["messages"]] == ["user"]
    gate.set()
    rest = await second.events()
    assert types(rest)[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    # What had streamed before it opened, then the rest: the whole reply once.
    assert text_of(rest) == "Half, then the rest."
    assert text_of([*head, *await first.events()]) == "Half, then the rest."


async def test_leaving_a_thread_only_opened_stops_nothing_another_client_watches(
    alice_cookie, session_id
):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("Still here.", gate=gate))
    asking = AgUiRequest(run_input(session_id, "Hi"), alice_cookie)
    head = await asking.events_until("TEXT_MESSAGE_CONTENT")
    opening = AgUiRequest(run_input(session_id), alice_cookie)
    await opening.events_until("MESSAGES_SNAPSHOT")
    await opening.close()
    gate.set()
    rest = await asking.events()
    assert (text_of([*head, *rest]), types(rest)[-1]) == ("Still here.", "RUN_FINISHED")
    assert await run_statuses(session_id) == ["completed"]


async def test_approvals_are_interrupts_that_resume_answers(alice_cookie, session_id):
    chat_agent.script(
        streamed_reply("", tool_calls=approval_agent.two_payments()),
        streamed_reply("Paid Ann only."),
    )
    events = await AgUiRequest(run_input(session_id, "Pay them"), alice_cookie).events()
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED"
    interrupts = finished["outcome"]["interrupts"]
    assert finished["outcome"]["type"] == "interrupt"
    assert [(i["id"], i["toolCallId"], i["reason"]) for i in interrupts] == [
        ("call-ann", "call-ann", "tool_approval"),
        ("call-bob", "call-bob", "tool_approval"),
    ]
    assert interrupts[0]["message"] == approval_agent.PAYMENT_DESCRIPTION
    # An answer to one of two leaves the run waiting: the other is asked again.
    ann = {"interruptId": "call-ann", "status": "resolved", "payload": {"approve": True}}
    again = await AgUiRequest(run_input(session_id, resume=[ann]), alice_cookie).events()
    assert [i["id"] for i in again[-1]["outcome"]["interrupts"]] == ["call-bob"]
    bob = {"interruptId": "call-bob", "status": "cancelled"}
    resumed = await AgUiRequest(run_input(session_id, resume=[bob]), alice_cookie).events()
    results = {e["toolCallId"]: e["content"] for e in resumed if e["type"] == "TOOL_CALL_RESULT"}
    assert results["call-ann"] == "sent 5 to ann"
    assert "call-bob" in results
    assert (text_of(resumed), types(resumed)[-1]) == ("Paid Ann only.", "RUN_FINISHED")
    assert approval_agent.EXECUTED == ["ann"]
    assert await run_statuses(session_id) == ["completed"]


async def test_an_answer_to_nothing_that_waits_is_an_error(alice_cookie, session_id):
    entry = {"interruptId": "call-x", "status": "resolved", "payload": {"approve": True}}
    events = await AgUiRequest(run_input(session_id, resume=[entry]), alice_cookie).events()
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[1]["code"] == "unknown_approval"


async def test_a_spent_budget_is_a_run_error_before_any_model_call(
    alice_cookie, session_id, use_agent
):
    use_agent("tests.chat_agent.make_payment_agent", QUOTAS={"TOKENS_PER_DAY": 0})
    chat_agent.script(streamed_reply("never"))
    events = await AgUiRequest(run_input(session_id, "Hi"), alice_cookie).events()
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[1]["code"] == "quota_exceeded"
    assert await run_statuses(session_id) == []
