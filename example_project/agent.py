"""The example project's agent, named by ``AGENT_SESSIONS["AGENT"]``.

Without ``OPENAI_API_KEY`` the agent runs on the offline ``DemoModel``. With the key it
uses a real model: ``AGENT_MODEL`` (default ``gpt-4o-mini``) through the Responses API,
or, when ``OPENAI_BASE_URL`` points at an OpenAI-compatible server, through the Chat
Completions API that such servers speak. The environment is read when the agent is
built, never at import time.
"""

from __future__ import annotations

import os
from typing import Any

from agents import Agent, Model, OpenAIChatCompletionsModel, set_tracing_disabled

from example_project.demo_model import DemoModel
from example_project.demo_tools import DEMO_TOOLS

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

INSTRUCTIONS = (
    "You are the assistant of the django-agent-sessions example project. Answer briefly and "
    "in plain text. Use the current_time tool for questions about the date or time, and the "
    "calculate tool for arithmetic, and send_company_email only when asked to email everyone."
)


def build_agent(scope: Any = None) -> Agent[Any]:
    """Return the chat agent; ``scope`` is the websocket's ASGI scope (unused here)."""
    return Agent(
        name="Example assistant",
        instructions=INSTRUCTIONS,
        model=_model(),
        tools=list(DEMO_TOOLS),
    )


def _model() -> Model | str:
    if not os.environ.get("OPENAI_API_KEY"):
        # Nothing would accept the traces without a key; exporting them only logs errors.
        set_tracing_disabled(True)
        return DemoModel()
    model_name = os.environ.get("AGENT_MODEL") or DEFAULT_OPENAI_MODEL
    base_url = os.environ.get("OPENAI_BASE_URL")
    if not base_url:
        return model_name
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key=os.environ["OPENAI_API_KEY"])
    return OpenAIChatCompletionsModel(model=model_name, openai_client=client)
