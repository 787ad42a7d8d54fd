"""Agents a task worker loads by their dotted path (``RunOrder.agent``), for the tests of
runs as tasks (``tests/streaming/working``): each counts what it did, per conversation,
so that a test sees how many times an agent was built, its model called and its tool run.

``make_counting_agent``: its model calls ``bump`` once, then answers with the output.
``make_gated_agent``: its model waits for the conversation's gate (a thread event, set
from any thread) before it answers, so a test decides when a run ends.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Any

from agents import Agent, RunContextWrapper, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel

from tests.scripted import streamed_reply, tool_turn

PATH = "tests.order_agent.make_counting_agent"
GATED = "tests.order_agent.make_gated_agent"

AGENTS_MADE: Counter[str] = Counter()  # session id -> agents built for it
MODEL_CALLS: Counter[str] = Counter()  # session id -> model turns
BUMPS: Counter[str] = Counter()  # session id -> runs of the tool (its side effect)
SCOPES: list[dict[str, Any]] = []  # the scope each agent was built with

GATES: dict[str, threading.Event] = {}  # session id -> set: the gated agent answers
ASKED: dict[str, threading.Event] = {}  # session id -> set once its model was called
_lock = threading.Lock()


def reset() -> None:
    with _lock:
        AGENTS_MADE.clear()
        MODEL_CALLS.clear()
        BUMPS.clear()
        SCOPES.clear()
        GATES.clear()
        ASKED.clear()


def gate(session_id: str) -> threading.Event:
    with _lock:
        return GATES.setdefault(session_id, threading.Event())


def asked(session_id: str) -> threading.Event:
    with _lock:
        return ASKED.setdefault(session_id, threading.Event())


@function_tool
def bump(ctx: RunContextWrapper[Any]) -> str:
    """Count one run of this tool for the conversation (the side effect)."""
    with _lock:
        BUMPS[ctx.context.session_id] += 1
        return f"bumped {BUMPS[ctx.context.session_id]}"


def _count(session_id: str) -> None:
    with _lock:
        MODEL_CALLS[session_id] += 1


def _session_of(scope: dict[str, Any]) -> str:
    """The conversation: a task's scope names it; a socket's has it in its route."""
    if "session_id" in scope:
        return str(scope["session_id"])
    return str(scope["url_route"]["kwargs"]["session_id"])


def make_counting_agent(scope: dict[str, Any]) -> Agent[Any]:
    session_id = _session_of(scope)
    with _lock:
        AGENTS_MADE[session_id] += 1
        SCOPES.append(scope)

    def step(call: ModelCall) -> ModelStep:
        _count(session_id)
        last = call.input[-1] if isinstance(call.input, list) else {"content": call.input}
        if last.get("type") == "function_call_output":
            return streamed_reply(f"The tool said {last['output']}.")
        return tool_turn("bump", {}, call_id=f"call-{session_id}")

    model = ScriptedModel([ModelStep.respond(step) for _ in range(2)])
    return Agent(name="Counter", model=model, tools=[bump])


def make_gated_agent(scope: dict[str, Any]) -> Agent[Any]:
    session_id = _session_of(scope)
    with _lock:
        AGENTS_MADE[session_id] += 1

    async def answer(call: ModelCall) -> ModelStep:
        _count(session_id)
        asked(session_id).set()
        # Bounded: a test that forgets to open the gate still ends.
        await asyncio.to_thread(gate(session_id).wait, 20)
        return streamed_reply("Let through.")

    model = ScriptedModel([ModelStep.respond(answer)])
    return Agent(name="Gated", model=model)
