"""``AgentRunContext``: what a run's tools receive as ``ctx.context``, through the real
SDK ``Runner`` on a scripted model, and a project's subclass of it."""

from __future__ import annotations

import dataclasses
from typing import Any

from agents import Agent, RunContextWrapper, Runner, function_tool

from django_agent_sessions.streaming.visiting.context import AgentRunContext
from tests.scripted import ScriptedModel, streamed_reply, tool_turn


def test_it_holds_who_asks_in_which_conversation() -> None:
    fields = [field.name for field in dataclasses.fields(AgentRunContext)]
    assert fields == ["user", "session_id", "session", "scope"]
    context = AgentRunContext(user="alice", session_id="s-1", session=None, scope={"a": 1})
    assert context == AgentRunContext("alice", "s-1", None, {"a": 1})
    assert context != dataclasses.replace(context, session_id="s-2")


@dataclasses.dataclass
class TenantContext(AgentRunContext):
    """What a project's ``get_run_context()`` may return instead."""

    tenant: str = "acme"


async def test_a_tool_of_a_real_run_receives_it_as_its_context() -> None:
    seen: list[Any] = []

    @function_tool
    def whoami(ctx: RunContextWrapper[AgentRunContext]) -> str:
        """Who asks."""
        seen.append(ctx.context)
        return f"{ctx.context.user} in {ctx.context.session_id}"

    model = ScriptedModel([tool_turn("whoami", {}, call_id="c1"), streamed_reply("Done.")])
    agent: Agent[Any] = Agent(name="A", model=model, tools=[whoami])
    context = TenantContext(user="alice", session_id="s-1", session=None, scope={"type": "x"})
    result = Runner.run_streamed(agent, "Who am I?", context=context)
    async for _event in result.stream_events():
        pass
    assert result.final_output == "Done."
    # The very object the run was given, subclass fields included.
    assert seen == [context]
    assert seen[0] is context
    assert seen[0].tenant == "acme"
    items: list[dict[str, Any]] = [dict(item) for item in result.to_input_list()]
    outputs = [item["output"] for item in items if item.get("type") == "function_call_output"]
    assert outputs == ["alice in s-1"]
