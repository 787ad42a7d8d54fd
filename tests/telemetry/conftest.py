"""OpenTelemetry's SDK for one test: its in-memory span exporter and metric reader set as
the global providers, and the Agents SDK's instrumentation (``instrumented``).

The API lets a process set its providers once; a test resets that (private) state
before and after, so that no other test of the process finds a provider set, and the
app's instruments (made once per provider) are made again.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from agents import Agent, set_tracing_disabled
from channels.layers import get_channel_layer
from opentelemetry import metrics, trace
from opentelemetry.metrics import _internal as metrics_state
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.telemetry import live


@dataclass
class Telemetry:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    tracer_provider: TracerProvider

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.finished() if span.name == name]

    def points(self, name: str) -> list[Any]:
        """The data points of the metric ``name`` collected now."""
        data = self.metrics.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found += list(metric.data.data_points)
        return found


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _forget_providers() -> None:
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None
    metrics_state._METER_PROVIDER_SET_ONCE = Once()
    metrics_state._METER_PROVIDER = None
    live.instruments.cache_clear()


@pytest.fixture
def otel() -> Iterator[Telemetry]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    _forget_providers()
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(meter_provider)
    yield Telemetry(exporter, reader, tracer_provider)
    _forget_providers()
    tracer_provider.shutdown()
    meter_provider.shutdown()


@pytest.fixture
def instrumented(otel: Telemetry) -> Iterator[Telemetry]:
    """The Agents SDK's OpenTelemetry instrumentation (OpenInference's) on, and the SDK's
    tracing with it (the suite turns it off: tests/conftest.py)."""
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=otel.tracer_provider)
    set_tracing_disabled(False)
    yield otel
    set_tracing_disabled(True)
    instrumentor.uninstrument()


class Conversation:
    """A stored conversation, a socket of this process watching it, and its runs."""

    def __init__(self, pk: int, session_id: str) -> None:
        self.pk, self.session_id = pk, session_id
        self.layer = get_channel_layer()
        self.channel = f"test-telemetry.socket-{uuid.uuid4().hex}"
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        fanout.watch(pk, self.channel, lambda message: self.events.put_nowait(message["event"]))

    def request(self, agent: Agent[Any], text: str = "Hi") -> active_runs.RunRequest:
        return active_runs.RunRequest(
            agent=agent,
            text=text,
            session=DjangoSession(self.session_id),
            context=None,
            conversation_pk=self.pk,
            session_id=self.session_id,
            user=None,
        )

    async def until(self, *kinds: str) -> list[dict[str, Any]]:
        seen = [await asyncio.wait_for(self.events.get(), 10)]
        while seen[-1]["type"] not in kinds:
            seen.append(await asyncio.wait_for(self.events.get(), 10))
        return seen


@pytest.fixture
async def conversation(session_id: str) -> AsyncIterator[Conversation]:
    record = await AgentSession.objects.acreate(session_id=session_id)
    conversation = Conversation(int(record.pk), session_id)
    yield conversation
    fanout.unwatch(conversation.channel)
    for active in active_runs.local_runs():  # a run a failing test left going
        active.cancel()
