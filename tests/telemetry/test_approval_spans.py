"""A run that waits for approvals: its first part's span ends ``waiting``; the wait and
the resumed part are spans of the same trace, recorded by the worker that resumes it."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent
from agents.testing import ScriptedModel

from django_agent_sessions.models import AgentRun
from django_agent_sessions.streaming.running import active_runs, run_task
from tests.approval_agent import send_payment, two_payments
from tests.scripted import streamed_reply
from tests.telemetry.conftest import Conversation, Telemetry

pytestmark = pytest.mark.django_db(transaction=True)


def payments(*steps: Any) -> Agent[Any]:
    return Agent(name="Payments", model=ScriptedModel(list(steps)), tools=[send_payment])


async def decide(conversation: Conversation, call_id: str, approve: bool) -> None:
    async def request() -> active_runs.RunRequest:
        return conversation.request(payments(streamed_reply("Paid.")), "")

    assert await run_task.decide(
        request,
        conversation.pk,
        call_id,
        approve=approve,
        message="",
        user=None,
        user_id=None,
        channel_layer=conversation.layer,
    )


async def test_the_wait_and_the_resumed_part_are_in_the_runs_trace(
    otel: Telemetry, conversation: Conversation
) -> None:
    active = await run_task.start(
        conversation.request(payments(two_payments()), "Pay Ann and Bob"),
        channel_layer=conversation.layer,
    )
    assert active is not None
    assert active.task is not None
    await active.task  # it waits
    [first] = otel.named("agent_sessions.run")
    assert (first.attributes or {})["agent_sessions.run.status"] == "waiting"
    [requested] = [e for e in first.events if e.name == "agent_sessions.approval.requested"]
    assert (requested.attributes or {})["agent_sessions.calls"] == 2

    await decide(conversation, "call-bob", False)
    await decide(conversation, "call-ann", True)
    resumed = active_runs.local_run(conversation.pk)
    assert resumed is not None
    assert resumed.task is not None
    await resumed.task
    record = await AgentRun.objects.aget(run_id=active.run_id)
    assert record.status == "completed"

    trace_id = first.context.trace_id
    assert record.trace_id == format(trace_id, "032x")
    [wait] = otel.named("agent_sessions.approval_wait")
    [resume] = otel.named("agent_sessions.resume")
    for span in (wait, resume):
        assert span.context.trace_id == trace_id
        assert (span.attributes or {})["agent_sessions.run.id"] == active.run_id
    assert record.waited_at is not None
    assert wait.start_time == int(record.waited_at.timestamp() * 1_000_000_000)
    assert wait.end_time is not None
    assert resume.start_time is not None
    assert wait.end_time <= resume.start_time
    attributes = dict(resume.attributes or {})
    assert attributes["agent_sessions.run.resumed"] is True
    assert attributes["agent_sessions.run.status"] == "completed"
    # The resumed part's own steps are under it.
    read = [s for s in otel.named("agent_sessions.history.read") if s.context.trace_id == trace_id]
    assert any(s.parent is not None and s.parent.span_id == resume.context.span_id for s in read)
