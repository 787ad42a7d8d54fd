"""The offline demo model, driven through the SDK's real Runner (streamed and not)."""

from __future__ import annotations

import asyncio
import re
import time
import uuid

import pytest
from agents import Agent, Runner
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent
from openai.types.responses import ResponseTextDeltaEvent

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession
from example_project.agent import build_agent
from example_project.demo_model import DemoModel, word_delay_from_environment
from example_project.demo_script import DemoModelError, long_story
from example_project.demo_tools import DEMO_TOOLS, CalculationError, evaluate


def demo_agent(delay: float = 0.0) -> Agent[None]:
    return Agent(name="Demo", model=DemoModel(word_delay=delay), tools=list(DEMO_TOOLS))


async def run_streamed(agent: Agent[None], text: str, **kwargs):
    result = Runner.run_streamed(agent, text, **kwargs)
    deltas: list[str] = []
    items: list[str] = []
    async for event in result.stream_events():
        if isinstance(event, RawResponsesStreamEvent):
            if isinstance(event.data, ResponseTextDeltaEvent):
                deltas.append(event.data.delta)
        elif isinstance(event, RunItemStreamEvent):
            items.append(event.name)
    return result, deltas, items


async def test_plain_message_streams_word_by_word():
    result, deltas, items = await run_streamed(demo_agent(), "Hello, demo!")

    assert len(deltas) > 20, "one delta per word"
    assert "".join(deltas) == result.final_output
    assert result.final_output.startswith("You said: “Hello, demo!”.")
    assert items == ["message_output_created"]
    assert result.context_wrapper.usage.requests == 1
    assert result.context_wrapper.usage.output_tokens > 20


async def test_same_conversation_gets_the_same_reply():
    first, _, _ = await run_streamed(demo_agent(), "What is a session?")
    second, _, _ = await run_streamed(demo_agent(), "What is a session?")
    assert first.final_output == second.final_output


async def test_calculation_calls_the_calculator_tool():
    result, deltas, items = await run_streamed(demo_agent(), "What is (12 + 30) * 2?")

    assert items == [
        "reasoning_item_created",
        "tool_called",
        "tool_output",
        "message_output_created",
    ]
    call = next(item for item in result.new_items if item.type == "tool_call_item")
    assert call.raw_item.name == "calculate"
    assert call.raw_item.arguments == '{"expression":"(12 + 30) * 2"}'
    output = next(item for item in result.new_items if item.type == "tool_call_output_item")
    assert output.output == "84"
    assert result.final_output == "The calculator says (12 + 30) * 2 = 84."
    assert "".join(deltas) == result.final_output
    assert result.context_wrapper.usage.requests == 2


async def test_time_question_calls_the_clock_tool():
    result, _, items = await run_streamed(demo_agent(), "What time is it?")

    assert "tool_called" in items
    call = next(item for item in result.new_items if item.type == "tool_call_item")
    assert call.raw_item.name == "current_time"
    assert re.fullmatch(
        r"The clock tool says it is \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC right now\.",
        result.final_output,
    )


async def test_calculator_errors_reach_the_reply():
    result, _, _ = await run_streamed(demo_agent(), "calculate 2 ** 1000")
    assert result.final_output == (
        "I could not calculate 2 ** 1000: exponents above 100 are not supported."
    )


async def test_without_tools_it_answers_in_text():
    agent = Agent(name="No tools", model=DemoModel(word_delay=0))
    result, _, items = await run_streamed(agent, "what time is it")
    assert items == ["message_output_created"]
    assert result.final_output.startswith("You said:")


async def test_non_streamed_run_gives_the_same_answer():
    result = await Runner.run(demo_agent(), "What is 6 * 7?")
    assert result.final_output == "The calculator says 6 * 7 = 42."


async def test_asking_for_an_error_raises_from_the_model():
    with pytest.raises(DemoModelError, match="failed on purpose"):
        await run_streamed(demo_agent(), "Please simulate an error")


async def test_pacing_follows_the_word_delay():
    started = time.monotonic()
    _, deltas, _ = await run_streamed(demo_agent(delay=0.01), "pace check")
    elapsed = time.monotonic() - started
    assert elapsed >= len(deltas) * 0.01


def test_word_delay_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("DEMO_MODEL_DELAY", "0.2")
    assert word_delay_from_environment() == 0.2
    assert DemoModel().word_delay == 0.2
    monkeypatch.setenv("DEMO_MODEL_DELAY", "fast")
    with pytest.raises(ValueError, match="DEMO_MODEL_DELAY must be a number"):
        DemoModel()
    monkeypatch.setenv("DEMO_MODEL_DELAY", "-1")
    with pytest.raises(ValueError, match="between 0 and 10"):
        DemoModel()
    monkeypatch.delenv("DEMO_MODEL_DELAY")
    assert DemoModel().word_delay == 0.05


async def test_long_story_can_be_cancelled_mid_stream():
    result = Runner.run_streamed(demo_agent(delay=0.005), "Tell me a long story")
    received = ""
    async for event in result.stream_events():
        if isinstance(event, RawResponsesStreamEvent) and isinstance(
            event.data, ResponseTextDeltaEvent
        ):
            received += event.data.delta
            if len(received) > 200:
                result.cancel()
    assert 200 < len(received) < len(long_story()) / 2


def test_calculator_refuses_anything_but_arithmetic():
    assert evaluate("1 + 2 * 3") == 7
    assert evaluate("7 / 2") == 3.5
    assert evaluate("2 ^ 10") == 1024
    for expression, problem in [
        ("__import__('os').system('true')", "only numbers"),
        ("(1).__class__", "only numbers"),
        ("1 / 0", "division by zero"),
        ("9 ** 9 ** 9", "exponents above 100"),
        ("1 +", "not an arithmetic expression"),
        ("", "empty"),
        ("1+" * 150 + "1", "longer than 200"),
        ("True + 1", "only numbers"),
    ]:
        with pytest.raises(CalculationError, match=problem):
            evaluate(expression)


def test_factory_uses_the_demo_model_without_an_api_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = build_agent()
    assert isinstance(agent.model, DemoModel)
    assert {tool.name for tool in agent.tools} == {
        "current_time",
        "calculate",
        "send_company_email",
        "research",
    }


async def test_the_email_tool_waits_for_approval_and_a_rejection_is_answered(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = build_agent()
    result = await Runner.run(agent, "Email everyone about the fire drill")
    [request] = result.interruptions
    assert (request.tool_name, request.arguments) == (
        "send_company_email",
        '{"subject":"The fire drill"}',
    )
    state = result.to_state()
    state.reject(state.get_interruptions()[0])
    resumed = await Runner.run(agent, state)
    assert resumed.final_output == "You rejected the email, so nothing was sent."


def test_factory_uses_a_real_model_with_an_api_key(monkeypatch):
    from agents import OpenAIChatCompletionsModel

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setenv("AGENT_MODEL", "gpt-4.1-mini")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert build_agent().model == "gpt-4.1-mini"

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = build_agent({"type": "websocket"}).model
    assert isinstance(model, OpenAIChatCompletionsModel)
    assert model.model == "gpt-4.1-mini"


@pytest.mark.django_db(transaction=True)
async def test_remembers_the_conversation_through_django_session():
    session_id = f"demo-{uuid.uuid4().hex}"
    session = DjangoSession(session_id)
    agent = demo_agent()

    first, _, _ = await run_streamed(agent, "First message", session=session)
    second, _, _ = await run_streamed(agent, "What is 2 + 2?", session=session)
    third, _, _ = await run_streamed(agent, "Third message", session=session)

    assert "You have sent me 1 message in" in first.final_output
    assert second.final_output == "The calculator says 2 + 2 = 4."
    assert "You have sent me 3 messages in" in third.final_output
    stored = await session.get_items()
    assert [item.get("type", "message") for item in stored] == [
        "message",
        "message",
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "message",
        "message",
        "message",
    ]
    row = await AgentSession.objects.aget(session_id=session_id)
    assert row.title == "First message"
    await asyncio.sleep(0)
