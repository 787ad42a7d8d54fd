"""The agent the websocket tests chat with: a real Agent on a scripted, streaming model.

``AGENT_SESSIONS["AGENT"] = "tests.chat_agent.make_agent"``; each test scripts the model
with :func:`script`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, RunContextWrapper, function_tool
from agents.testing import ModelCall, ModelStep

from tests.scripted import ScriptedModel, streamed_reply, tool_turn

model = ScriptedModel([])
tool_users: list[Any] = []
tool_gate: asyncio.Event | None = None


def script(*steps: Any) -> ScriptedModel:
    global model
    model = ScriptedModel(list(steps))
    tool_users.clear()
    return model


@function_tool
async def get_weather(ctx: RunContextWrapper[Any], city: str) -> str:
    """The weather in a city."""
    tool_users.append(ctx.context.user)
    if tool_gate is not None:
        await tool_gate.wait()
    return f"sunny in {city}"


def make_agent(scope: dict[str, Any]) -> Agent[Any]:
    # The two transports, and a task worker (runs as tasks).
    assert scope["type"] in ("websocket", "http", "agent_sessions.task")
    return Agent(name="Assistant", model=model, tools=[get_weather])


def _demo_step(call: ModelCall) -> ModelStep:
    last = call.input[-1] if isinstance(call.input, list) else {"content": call.input}
    if last.get("type") == "function_call_output":
        forecast = f"The forecast says {last['output']}."
        asked = [i for i in call.input if i.get("role") == "user"][-1]
        if "long" in str(asked.get("content", "")):  # asked for the "long weather"
            return streamed_reply(forecast + " and so it goes on" * 60, delay=0.02)
        return streamed_reply(forecast, delay=0.01)
    text = str(last.get("content", ""))
    if "weather" in text:
        return tool_turn("get_weather", {"city": "Paris"}, call_id=f"call-{len(call.input)}")
    if "long" in text:
        return streamed_reply("and so the story goes on " * 60, delay=0.02)
    return streamed_reply(f"You said: {text}", delay=0.01)


def make_demo_agent() -> Agent[Any]:
    """An agent for servers started by the tests: it answers whatever it is asked,
    calls its tool for "weather", and writes slowly for "long" (after its tool call,
    for both)."""
    model = ScriptedModel([ModelStep.respond(_demo_step) for _ in range(4)])
    return Agent(name="Demo", model=model, tools=[get_weather])


def broken(scope: dict[str, Any]) -> Agent[Any]:
    raise RuntimeError("secret configuration detail")


def make_payment_agent(scope: dict[str, Any]) -> Agent[Any]:
    """The scripted model with a tool that needs approval (``send_payment``)."""
    from tests.approval_agent import send_payment

    return Agent(name="Payments", model=model, tools=[get_weather, send_payment])


def _payment_step(call: ModelCall) -> ModelStep:
    from tests.approval_agent import two_payments

    items = call.input if isinstance(call.input, list) else [{"content": call.input}]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    last = items[-1]
    if last.get("type") == "function_call_output":
        said = "; ".join(f"{o['call_id']}: {o['output']}" for o in outputs[-2:])
        return streamed_reply(f"Done. {said}", delay=0.01)
    if "pay" in str(last.get("content", "")):
        return streamed_reply("", tool_calls=two_payments())
    return streamed_reply("Nothing to pay.", delay=0.01)


def make_payment_demo_agent() -> Agent[Any]:
    """For servers started by the tests: "pay" asks to send two payments (each needs
    approval); once they are decided it reports the tool outputs."""
    from tests.approval_agent import send_payment

    model = ScriptedModel([ModelStep.respond(_payment_step) for _ in range(4)])
    return Agent(name="Payments", model=model, tools=[send_payment])
