"""A run's steps before its first token are timed and become spans when the run ends
(``telemetry.steps``): the same spans, at the times they happened, in the run's trace."""

from __future__ import annotations

import contextvars
from typing import Any

import pytest
from agents import Agent, function_tool
from agents.testing import ScriptedModel, function_call
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from django_agent_sessions import telemetry
from django_agent_sessions.models import AgentRun
from django_agent_sessions.streaming.running import run_task
from django_agent_sessions.telemetry import live, steps
from tests.telemetry.conftest import Conversation, Telemetry, attributes
from tests.telemetry.test_runs import run_to_end

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_timed_step_becomes_the_span_it_would_have_been(otel: Telemetry) -> None:
    log = steps.StepLog()
    timed = steps.current.set(log)
    try:
        with otel.tracer_provider.get_tracer("test").start_as_current_span("parent") as parent:
            with telemetry.span(telemetry.HISTORY_READ, {"gen_ai.conversation.id": "c"}) as step:
                step.set_attribute("agent_sessions.items", 3)
                step.add_event("noted", {"agent_sessions.calls": 1})
            with pytest.raises(ValueError, match="no room"), telemetry.span(telemetry.HISTORY_SAVE):
                raise ValueError("no room left")
    finally:
        steps.current.reset(timed)
    assert [s.name for s in otel.finished()] == ["parent"]  # the steps were only timed
    live.emit(log.steps)
    [read], [save], [outer] = (otel.named(n) for n in (*log_names(log), "parent"))
    assert read.parent is not None
    assert save.parent is not None
    assert read.parent.span_id == save.parent.span_id == parent.get_span_context().span_id
    assert read.context.trace_id == outer.context.trace_id
    assert attributes(read) == {"gen_ai.conversation.id": "c", "agent_sessions.items": 3}
    assert [(e.name, dict(e.attributes or {})) for e in read.events] == [
        ("noted", {"agent_sessions.calls": 1})
    ]
    times = [start(outer), start(read), end(read), start(save), end(save), end(outer)]
    assert times == sorted(times)
    assert read.status.status_code is StatusCode.UNSET
    # An error is recorded as a span made at once records it.
    assert save.status.status_code is StatusCode.ERROR
    assert save.status.description == "ValueError: no room left"
    [error] = save.events
    assert (error.name, (error.attributes or {})["exception.message"]) == (
        "exception",
        "no room left",
    )


def log_names(log: steps.StepLog) -> list[str]:
    return [step.name for step in log.steps]


async def test_a_runs_first_steps_are_timed_and_its_end_is_a_span_at_once(
    otel: Telemetry, conversation: Conversation
) -> None:
    await run_to_end(conversation, "Hi", "Hello there.")
    exported = otel.finished()  # in the order they ended (a simple processor)
    [run] = otel.named("agent_sessions.run")
    assert exported[-1] is run
    started, ended = (published(exported, kind) for kind in ("run.started", "run.completed"))
    [read] = otel.named(telemetry.HISTORY_READ)
    saves = sorted(otel.named(telemetry.HISTORY_SAVE), key=start)
    # Before the first token: timed, and made spans after the run's end was published
    # (after its text, so a span at once).
    for timed in (started, read, saves[0]):
        assert exported.index(timed) > exported.index(ended), timed.name
    # In the order they happened, inside the run's span.
    in_order = [started, read, *saves, ended]
    assert [start(span) for span in in_order] == sorted(start(span) for span in in_order)
    for span in in_order:
        assert start(run) <= start(span) <= end(span) <= end(run), span.name


def published(spans: list[ReadableSpan], kind: str) -> ReadableSpan:
    [found] = [s for s in spans if attributes(s).get("agent_sessions.event.type") == kind]
    return found


def start(span: ReadableSpan) -> int:
    assert span.start_time is not None
    return span.start_time


def end(span: ReadableSpan) -> int:
    assert span.end_time is not None
    return span.end_time


async def test_a_failure_to_make_the_steps_spans_does_not_stop_the_runs_end(
    otel: Telemetry, conversation: Conversation, monkeypatch: Any, caplog: Any
) -> None:
    def exporter_gone(steps: Any) -> None:
        raise RuntimeError("the exporter is gone")

    monkeypatch.setattr(live, "emit", exporter_gone)
    run_id = await run_to_end(conversation, "Hi", "Hello.")
    record = await AgentRun.objects.aget(run_id=run_id)
    [span] = otel.named("agent_sessions.run")
    assert record.status == "completed"
    assert record.trace_id == format(span.context.trace_id, "032x")  # what came after it ran
    assert f"Could not record the first steps of run {run_id}" in caplog.text


async def test_a_step_after_a_run_that_never_sent_text_is_a_span_at_once(
    otel: Telemetry, conversation: Conversation
) -> None:
    # A task the run started (an approval's expiry, say) keeps the run's context after
    # the run's end: its steps must not go to a log that was already made spans.
    kept: list[contextvars.Context] = []

    @function_tool
    def remember() -> str:
        """Remember the moment."""
        kept.append(contextvars.copy_context())
        return "remembered"

    model = ScriptedModel([[function_call("remember", {}, call_id="call-1")]])  # then fails
    failing = Agent(name="Tracer", model=model, tools=[remember])
    started = await run_task.start(conversation.request(failing), channel_layer=conversation.layer)
    assert started is not None
    assert started.task is not None
    await started.task
    [span] = otel.named("agent_sessions.run")
    assert attributes(span)["agent_sessions.run.status"] == "failed"  # no text was sent
    [context] = kept
    later = {"agent_sessions.event.type": "approval.resolved"}
    with context.run(telemetry.span, telemetry.PUBLISH, later):
        pass
    assert [s for s in otel.named(telemetry.PUBLISH) if attributes(s) == later]
