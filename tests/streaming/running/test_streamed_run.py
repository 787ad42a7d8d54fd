"""StreamedRun on its own: SDK stream events in, wire events out. No websockets."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from agents import Agent, function_tool

from django_agent_sessions import DjangoSession
from django_agent_sessions.streaming.running.streamed_run import StreamedRun
from django_agent_sessions.streaming.wire.encoding import frame_size
from tests.scripted import ScriptedModel, streamed_reply, tool_turn

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "The weather in Paris is sunny, 21 degrees, with a light breeze from the west."
tool_started = asyncio.Event()


@function_tool
async def get_weather(city: str) -> str:
    """The weather in a city."""
    tool_started.set()
    await asyncio.sleep(0.3 if city == "slow" else 0)
    return f"sunny in {city}"


def make_agent(*steps) -> Agent:
    return Agent(name="Assistant", model=ScriptedModel(list(steps)), tools=[get_weather])


async def collect(run: StreamedRun) -> list[dict[str, Any]]:
    return [event async for event in run.events()]


def of_type(events, kind):
    return [event for event in events if event["type"] == kind]


async def test_a_run_streams_deltas_that_add_up_to_the_message(session_id):
    session = DjangoSession(session_id)
    run = StreamedRun(
        make_agent(streamed_reply(ANSWER)),
        "Weather?",
        run_id="r1",
        session=session,
        flush_seconds=10,
        flush_bytes=8,
    )
    events = await collect(run)

    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["run_id"] for e in events} == {"r1"}
    assert events[0]["type"] == "run.started"
    assert events[1]["item"] == {"kind": "message", "role": "user", "text": "Weather?"}
    deltas = of_type(events, "text.delta")
    assert len(deltas) > 3
    assert "".join(d["delta"] for d in deltas) == ANSWER
    message = of_type(events, "item.completed")[-1]["item"]
    assert message == {
        "kind": "message",
        "role": "assistant",
        "text": ANSWER,
        "html": f"<p>{ANSWER}</p>\n",
    }
    done = events[-1]
    assert done["type"] == "run.completed"
    assert done["final_output"] == ANSWER
    assert done["usage"] == {
        "requests": 1,
        "input_tokens": 11,
        "output_tokens": 7,
        "total_tokens": 18,
    }
    assert run.outcome.status == "completed"
    stored = await session.get_items()
    assert [item.get("role") for item in stored] == ["user", "assistant"]


async def test_deltas_are_coalesced_by_size(session_id):
    text = "x" * 3000
    run = StreamedRun(
        make_agent(streamed_reply(text, token_size=1)),
        "go",
        run_id="r",
        flush_seconds=10,
        flush_bytes=1024,
    )
    deltas = of_type(await collect(run), "text.delta")
    assert [len(d["delta"]) for d in deltas] == [1024, 1024, 952]


async def test_deltas_are_coalesced_by_time(session_id):
    text = "abcdefghij" * 4
    run = StreamedRun(
        make_agent(streamed_reply(text, token_size=2, delay=0.01)),
        "go",
        run_id="r",
        flush_seconds=0.06,
        flush_bytes=10_000,
    )
    deltas = of_type(await collect(run), "text.delta")
    # 20 tokens 10 ms apart (200 ms) in windows of 60 ms: a few frames, not 20, and
    # more than one (the first are sent while the model is still writing).
    assert 2 <= len(deltas) <= 8
    assert "".join(d["delta"] for d in deltas) == text


async def test_pending_text_is_sent_when_due_while_the_model_is_silent(session_id):
    """The flush timer alone sends what is pending: the model writes one token, then
    waits for the test, which waits for that token's frame."""
    gate = asyncio.Event()
    run = StreamedRun(
        make_agent(streamed_reply("abcd", token_size=2, gate=gate)),
        "go",
        run_id="r",
        flush_seconds=0.01,
        flush_bytes=10_000,
    )
    deltas = []

    async def read() -> None:
        async for event in run.events():
            if event["type"] == "text.delta":
                deltas.append(event["delta"])
                gate.set()  # the model goes on once the first frame is out

    await asyncio.wait_for(read(), timeout=30)
    assert deltas == ["ab", "cd"]


async def test_tool_calls_and_outputs_are_completed_items(session_id):
    agent = make_agent(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-1"), streamed_reply(ANSWER)
    )
    events = await collect(
        StreamedRun(agent, "Weather?", run_id="r", session=DjangoSession(session_id))
    )
    items = [e["item"] for e in of_type(events, "item.completed")]
    assert items[1] == {
        "kind": "tool_call",
        "call_id": "call-1",
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
    }
    assert items[2] == {"kind": "tool_output", "call_id": "call-1", "output": "sunny in Paris"}
    assert items[3]["text"] == ANSWER


async def test_a_model_error_is_a_failed_run_with_a_safe_message(session_id, caplog):
    agent = make_agent(RuntimeError("secret stack detail /etc/passwd"))
    run = StreamedRun(agent, "hi", run_id="r", session=DjangoSession(session_id))
    with caplog.at_level(
        logging.ERROR, logger="django_agent_sessions.streaming.running.streamed_run"
    ):
        events = await collect(run)
    failed = events[-1]
    assert failed["type"] == "run.failed"
    assert failed["error"]["code"] == "agent_error"
    assert "secret" not in str(failed)
    assert run.outcome.status == "failed"
    assert "secret stack detail" in run.outcome.error
    assert "secret stack detail" in caplog.text  # logged for the developers


async def test_cancel_mid_message_keeps_completed_turns_only(session_id):
    session = DjangoSession(session_id)
    produced: list[str] = []
    agent = make_agent(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-1"),
        streamed_reply(ANSWER * 4, delay=0.05, progress=produced),
    )
    run = StreamedRun(agent, "Weather?", run_id="r", session=session, flush_seconds=0.01)
    events = []
    async for event in run.events():
        events.append(event)
        if event["type"] == "text.delta" and len(of_type(events, "text.delta")) == 2:
            run.cancel()
    assert events[-1]["type"] == "run.cancelled"
    assert len("".join(produced)) < len(ANSWER * 4) / 2  # the model stopped at once
    assert run.outcome.status == "cancelled"
    stored = await session.get_items()
    # The user's message and the whole tool turn; none of the half-written reply.
    assert [item.get("type", "message") for item in stored] == [
        "message",
        "function_call",
        "function_call_output",
    ]


async def test_cancel_during_a_tool_leaves_no_dangling_call(session_id):
    session = DjangoSession(session_id)
    agent = make_agent(tool_turn("get_weather", {"city": "slow"}, call_id="c"), streamed_reply("x"))
    run = StreamedRun(agent, "Weather?", run_id="r", session=session)
    tool_started.clear()
    task = asyncio.ensure_future(collect(run))
    await asyncio.wait_for(tool_started.wait(), 5)
    run.cancel()
    events = await asyncio.wait_for(task, 2)
    assert events[-1]["type"] == "run.cancelled"
    stored = await session.get_items()
    assert [item.get("role") for item in stored] == ["user"]


async def run_on_a_budget(reply: str, token_size: int) -> int:
    """Runs ``reply`` with a 1000-byte budget; returns the bytes of every frame but the
    final event (which the budget does not hold back)."""
    agent = make_agent(streamed_reply(reply, token_size=token_size, delay=0.001))
    run = StreamedRun(agent, "go", run_id="r", max_bytes=1000, flush_bytes=token_size)
    events = await collect(run)
    assert events[-1]["type"] == "run.failed"
    assert events[-1]["error"]["code"] == "run_too_large"
    return sum(frame_size(event) for event in events[:-1])


async def test_a_run_past_its_byte_budget_is_stopped(session_id):
    sent = await run_on_a_budget("y" * 5000, token_size=100)
    assert 1000 - 300 < sent <= 1000


async def test_the_byte_budget_counts_frames_as_the_socket_gets_them(session_id):
    # Quotes and newlines take two bytes each once JSON-escaped, and every frame has an
    # envelope: counting the text alone would let this run send about twice the budget.
    sent = await run_on_a_budget('"\n' * 2500, token_size=50)
    assert sent <= 1000


async def test_snapshot_has_the_run_so_far():
    gate = asyncio.Event()
    run = StreamedRun(
        make_agent(streamed_reply(ANSWER, gate=gate)), "hi", run_id="r", flush_seconds=0.001
    )
    events = []
    async for event in run.events():
        events.append(event)
        if event["type"] == "text.delta" and not gate.is_set():
            snapshot = run.snapshot()
            gate.set()
    assert snapshot["seq"] == events.index(of_type(events, "text.delta")[0]) + 1
    assert snapshot["items"] == [{"kind": "message", "role": "user", "text": "hi"}]
    assert snapshot["text"] == of_type(events, "text.delta")[0]["delta"]
    assert ANSWER.startswith(snapshot["text"])


async def test_a_handoff_shows_which_agent_takes_over():
    from agents import handoff

    specialist = Agent(name="Specialist", model=ScriptedModel([streamed_reply("Expert answer.")]))
    transfer = handoff(specialist)
    triage = Agent(
        name="Triage",
        model=ScriptedModel([tool_turn(transfer.tool_name, {}, call_id="h1")]),
        handoffs=[transfer],
    )
    events = await collect(StreamedRun(triage, "Hard question", run_id="r"))
    items = [e["item"] for e in of_type(events, "item.completed")]
    assert [item["kind"] for item in items] == ["message", "tool_call", "handoff", "message"]
    assert items[1]["name"] == transfer.tool_name
    assert items[2] == {"kind": "handoff", "source": "Triage", "target": "Specialist"}
    assert items[-1] == {
        "kind": "message",
        "role": "assistant",
        "text": "Expert answer.",
        "html": "<p>Expert answer.</p>\n",
    }
    assert events[-1]["type"] == "run.completed"
