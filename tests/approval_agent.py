"""An agent whose tool needs approval, and a resume in a fresh process.

``python -m tests.approval_agent`` reads a ``Resume`` (as JSON) on stdin, restores the
paused run with fresh objects, runs it to the end on a ``DjangoSession`` and prints the
final output: the proof that nothing of the first process is needed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agents import Agent, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

EXECUTED: list[str] = []


@function_tool(needs_approval=True)
def send_payment(amount: int, to: str) -> str:
    """Send money to someone (a test double: it only records the call)."""
    EXECUTED.append(to)
    return f"sent {amount} to {to}"


#: What the model and the approval card read about send_payment (its docstring).
PAYMENT_DESCRIPTION = "Send money to someone (a test double: it only records the call)."


def two_payments() -> list[Any]:
    return [
        function_call("send_payment", {"amount": 5, "to": "ann"}, call_id="call-ann"),
        function_call("send_payment", {"amount": 7, "to": "bob"}, call_id="call-bob"),
    ]


def payment_agent(*steps: Any) -> Agent[Any]:
    return Agent(name="Payments", model=ScriptedModel(list(steps)), tools=[send_payment])


async def _resume_from_stdin() -> None:
    from django_agent_sessions import DjangoSession
    from django_agent_sessions.streaming.running import paused

    data = json.load(sys.stdin)
    agent = payment_agent([assistant_message("Paid Ann; Bob's payment was refused.")])
    decisions = {key: (bool(v[0]), str(v[1])) for key, v in data["decisions"].items()}
    state = await paused.restore(agent, data["state"], decisions, context=None)
    result = Runner.run_streamed(agent, state, session=DjangoSession(data["session_id"]))
    async for _ in result.stream_events():
        pass
    print(json.dumps({"final_output": result.final_output, "executed": EXECUTED}))


if __name__ == "__main__":
    import django

    django.setup()
    from agents import set_tracing_disabled

    set_tracing_disabled(True)
    asyncio.run(_resume_from_stdin())
