"""The agent the websocket tests chat with: a real Agent on a scripted, streaming model.

``AGENT_SESSIONS["AGENT"] = "tests.chat_agent.make_agent"``; each test scripts the model
with :func:`script`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, RunContextWrapper, function_tool

from tests.scripted import ScriptedModel

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
    assert scope["type"] == "websocket"
    return Agent(name="Assistant", model=model, tools=[get_weather])
