"""A run's task body inside its span: the stream, then its pause or its end.

``tasks`` launches the task; the run's span (``telemetry.runs``) is opened here, in the
task, so that it is current for everything the run does: the SDK's Runner, which makes
tasks of its own (they copy the context), the history read, the saves, the publishes and
the recording of the end. Without OpenTelemetry the span is a no-op and this is the task.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agents import Agent

from django_agent_sessions.models import AgentRun
from django_agent_sessions.streaming.running import titling
from django_agent_sessions.streaming.running.active_runs import ActiveRun, RunRequest
from django_agent_sessions.streaming.running.outcomes import WAITING
from django_agent_sessions.telemetry import runs as run_telemetry

Pause = Callable[[ActiveRun], Awaitable[None]]
Finish = Callable[[ActiveRun, "dict[str, Any] | None"], Awaitable["AgentRun | None"]]


async def live(
    active: ActiveRun, request: RunRequest, *, resumed: bool, pause: Pause, finish: Finish
) -> None:
    """Stream the run; then ``pause`` it (it waits for approvals) or ``finish`` it."""
    facts = run_telemetry.RunFacts(
        run_pk=active.started.pk,
        run_id=active.run_id,
        session_id=request.session_id,
        agent_name=request.agent.name,
        model=model_name(request.agent),
        resumed=resumed,
    )
    async with run_telemetry.traced(facts) as traced:
        outcome = active.streamed.outcome
        terminal: dict[str, Any] | None = None
        try:
            terminal = await active.stream()
        finally:
            waits = terminal is None and outcome.status == WAITING
            if waits:
                traced.waiting(len(outcome.calls))
                await pause(active)
            else:
                recorded = await finish(active, terminal)
                # After the end is recorded and told: a title never delays the reply.
                titling.after_run(
                    recorded,
                    terminal,
                    agent=request.agent,
                    text=request.text,
                    conversation_pk=active.session_pk,
                    channel_layer=active.layer,
                )
            traced.ended(
                outcome.status, outcome.error_code, outcome.usage, final=outcome.status != WAITING
            )


def model_name(agent: Agent[Any]) -> str:
    """The agent's model as its metrics name it ("" for the SDK's default model)."""
    model = agent.model
    if model is None or isinstance(model, str):
        return model or ""
    return str(getattr(model, "model", "") or type(model).__name__)


# The SDK's run settings while tracing (no message text in its spans), for ``StreamedRun``.
run_config = run_telemetry.run_config
