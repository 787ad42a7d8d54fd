"""A scripted agent for steering tests: its first model call asks for the weather tool
(which waits for ``chat_agent.tool_gate``), every later call echoes the newest user
message of its input, so a test sees what the model was given."""

from __future__ import annotations

from typing import Any

from agents import Agent
from agents.testing import ModelCall, ModelStep

from tests import chat_agent
from tests.scripted import ScriptedModel, streamed_reply, tool_turn

model = ScriptedModel([])


def echo(call: ModelCall) -> ModelStep:
    said = [item for item in call.input if item.get("role") == "user"]
    return streamed_reply(f"Heard: {said[-1]['content']}")


def script(calls: int = 2) -> ScriptedModel:
    """The tool call, then ``calls - 1`` echoes."""
    global model
    echoes = [ModelStep.respond(echo) for _ in range(calls - 1)]
    model = ScriptedModel([tool_turn("get_weather", {"city": "Paris"}, call_id="c1"), *echoes])
    return model


def make_agent(scope: dict[str, Any]) -> Agent[Any]:
    return Agent(name="Steered", model=model, tools=[chat_agent.get_weather])
