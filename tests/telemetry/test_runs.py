"""A run's trace, with the OpenTelemetry SDK's in-memory exporter: one trace per run, the
documented spans and attributes (docs/operations.md), the SDK instrumentation's model
span under the run's span, no message text anywhere by default, the trace id on the
run record."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, function_tool
from agents.testing import ScriptedModel, function_call
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from django_agent_sessions.models import AgentRun
from django_agent_sessions.streaming.running import run_task
from tests.scripted import streamed_reply
from tests.telemetry.conftest import Conversation, Telemetry, attributes

pytestmark = pytest.mark.django_db(transaction=True)

ASKED = "Tell me the secret word periwinkle-quasar"
REPLIED = "The secret word is marmalade-zeppelin."
RUN_STEPS = {"agent_sessions.history.read", "agent_sessions.history.save", "agent_sessions.publish"}


NOTED = "lavender-obelisk"  # a tool's argument, and so its output


@function_tool
def note(text: str) -> str:
    """Note something down."""
    return f"noted {text}"


def agent(*steps: Any) -> Agent[Any]:
    return Agent(name="Tracer", model=ScriptedModel(list(steps), emit_traces=True), tools=[note])


async def run_to_end(
    conversation: Conversation, text: str, reply: str, *, tool: bool = False
) -> str:
    steps = [[function_call("note", {"text": NOTED}, call_id="call-note")]] if tool else []
    started = await run_task.start(
        conversation.request(agent(*steps, streamed_reply(reply)), text),
        channel_layer=conversation.layer,
    )
    assert started is not None
    assert started.task is not None
    await started.task
    return started.run_id


def descends_from(span: ReadableSpan, ancestor: ReadableSpan, spans: list[ReadableSpan]) -> bool:
    by_id = {s.context.span_id: s for s in spans}
    parent = span.parent
    while parent is not None:
        if parent.span_id == ancestor.context.span_id:
            return True
        found = by_id.get(parent.span_id)
        parent = found.parent if found is not None else None
    return False


async def test_each_run_is_one_trace_rooted_at_its_span(
    otel: Telemetry, conversation: Conversation
) -> None:
    first = await run_to_end(conversation, "One", "First reply.")
    second = await run_to_end(conversation, "Two", "Second reply.")
    spans = otel.finished()
    run_spans = otel.named("agent_sessions.run")
    assert [attributes(s)["agent_sessions.run.id"] for s in run_spans] == [first, second]
    assert all(s.parent is None for s in run_spans)  # each the root of its own trace
    traces = {s.context.trace_id for s in run_spans}
    assert len(traces) == 2
    # Every span is in one of the two runs' traces, under its run's span.
    for span in spans:
        assert span.context.trace_id in traces
        if span.name != "agent_sessions.run":
            root = next(r for r in run_spans if r.context.trace_id == span.context.trace_id)
            assert descends_from(span, root, spans), span.name
    for root in run_spans:
        names = {s.name for s in spans if s.context.trace_id == root.context.trace_id}
        assert names >= RUN_STEPS | {"agent_sessions.run"}


async def test_the_run_span_says_who_ran_what_and_how_it_ended(
    otel: Telemetry, conversation: Conversation
) -> None:
    run_id = await run_to_end(conversation, "Hi", "Hello there.")
    [span] = otel.named("agent_sessions.run")
    found = attributes(span)
    assert found["gen_ai.conversation.id"] == conversation.session_id
    assert found["agent_sessions.run.id"] == run_id
    assert found["gen_ai.agent.name"] == "Tracer"
    assert found["agent_sessions.run.status"] == "completed"
    assert found["agent_sessions.run.resumed"] is False
    assert found["agent_sessions.usage.requests"] == 1
    assert found["gen_ai.usage.input_tokens"] == 11
    assert found["gen_ai.usage.output_tokens"] == 7
    assert found["agent_sessions.usage.total_tokens"] == 18
    assert found["agent_sessions.run.time_to_first_token_ms"] > 0
    assert span.status.status_code is not StatusCode.ERROR
    [read] = otel.named("agent_sessions.history.read")
    assert read.attributes == {
        "gen_ai.conversation.id": conversation.session_id,
        "agent_sessions.items": 0,
    }
    saves = otel.named("agent_sessions.history.save")
    assert sum(attributes(s)["agent_sessions.items"] for s in saves) == 2
    publishes = otel.named("agent_sessions.publish")
    published = {(s.attributes or {})["agent_sessions.event.type"] for s in publishes}
    assert published == {"run.started", "run.completed"}


async def test_the_trace_id_is_stored_on_the_run(
    otel: Telemetry, conversation: Conversation
) -> None:
    run_id = await run_to_end(conversation, "Hi", "Hello.")
    [span] = otel.named("agent_sessions.run")
    record = await AgentRun.objects.aget(run_id=run_id)
    assert record.trace_id == format(span.context.trace_id, "032x")


async def test_a_failed_run_is_an_error_with_its_code(
    otel: Telemetry, conversation: Conversation
) -> None:
    failing = Agent(name="Tracer", model=ScriptedModel([]))  # no step: the model raises
    started = await run_task.start(conversation.request(failing), channel_layer=conversation.layer)
    assert started is not None
    assert started.task is not None
    await started.task
    [span] = otel.named("agent_sessions.run")
    found = attributes(span)
    assert found["agent_sessions.run.status"] == "failed"
    assert found["agent_sessions.run.error_code"]
    assert span.status.status_code is StatusCode.ERROR


async def test_the_sdk_model_span_nests_under_the_run_span(
    instrumented: Telemetry, conversation: Conversation
) -> None:
    await run_to_end(conversation, ASKED, REPLIED)
    spans = instrumented.finished()
    [run] = instrumented.named("agent_sessions.run")
    sdk = [s for s in spans if not s.name.startswith("agent_sessions.")]
    models = [s for s in sdk if (s.attributes or {}).get("openinference.span.kind") == "LLM"]
    assert models, [s.name for s in sdk]
    for span in sdk:
        assert span.context.trace_id == run.context.trace_id, span.name
        assert descends_from(span, run, spans), span.name
    # The SDK's trace starts in the run's span: its root is the run span's child.
    assert any(s.parent is not None and s.parent.span_id == run.context.span_id for s in sdk)


def _texts(span: ReadableSpan) -> list[str]:
    values = [*(span.attributes or {}).values()]
    for event in span.events:
        values += [*(event.attributes or {}).values(), event.name]
    return [str(value) for value in values] + [span.name]


async def test_no_message_text_is_in_any_span_by_default(
    instrumented: Telemetry, conversation: Conversation
) -> None:
    await run_to_end(conversation, ASKED, REPLIED, tool=True)
    spans = instrumented.finished()
    assert "note" in {s.name for s in spans}  # the SDK's spans are there, its tool's too
    words = ("periwinkle", "quasar", "marmalade", "zeppelin", "lavender", "obelisk")
    leaked = [(s.name, t) for s in spans for t in _texts(s) if any(w in t for w in words)]
    assert leaked == []


async def test_trace_messages_lets_the_sdk_spans_hold_the_text(
    instrumented: Telemetry, conversation: Conversation, settings: Any
) -> None:
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "TELEMETRY": {"TRACE_MESSAGES": True}}
    await run_to_end(conversation, ASKED, REPLIED, tool=True)
    texts = [t for s in instrumented.finished() for t in _texts(s)]
    assert any("lavender-obelisk" in t for t in texts)  # the search above would find it
    # The app's own spans never hold any.
    own = [s for s in instrumented.finished() if s.name.startswith("agent_sessions.")]
    assert not any("lavender" in t or "periwinkle" in t for s in own for t in _texts(s))
