"""Everything that calls OpenTelemetry: spans and instruments through the API.

Imported once by the package's ``__init__``; an ``ImportError`` here (the API is not
installed) makes every telemetry call of the app a no-op. Through the API alone, with no
SDK configured, spans do not record and instruments measure nothing: the project's
``TracerProvider`` and ``MeterProvider`` (its SDK, its exporters) decide what leaves.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    Span,
    SpanContext,
    Status,
    StatusCode,
    TraceFlags,
)

from django_agent_sessions.telemetry.steps import Step

SCOPE = "django_agent_sessions"
# Seconds: a first token within tens of milliseconds to a slow model's tens of seconds.
TTFT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


_tracer: list[Any] = [None, None]  # the global provider, and its tracer for the app


def tracer() -> trace.Tracer:
    """The app's tracer of the global provider (kept: the SDK's ``get_tracer`` costs
    about 30 us, more than a span; a provider set later is picked up)."""
    provider = trace.get_tracer_provider()
    if provider is not _tracer[0]:
        _tracer[:] = [provider, provider.get_tracer(SCOPE)]
    found: trace.Tracer = _tracer[1]
    return found


def span(name: str, attributes: Mapping[str, Any] | None = None) -> AbstractContextManager[Span]:
    """A child of the current span, current while the block runs (an error ends it
    with the exception recorded)."""
    return tracer().start_as_current_span(name, attributes=attributes)


def tracing() -> bool:
    """Whether a tracer provider is set (the API's default records nothing)."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


@contextmanager
def root_span(
    name: str, attributes: Mapping[str, Any], *, trace_id: str = "", run_id: str = ""
) -> Iterator[Span]:
    """A run's own span, current while the block runs.

    Without ``trace_id``: the root of a new trace (one trace per run), linked to the span
    that was current (the request that asked for it, when the project traces those).
    With it: a resumed run, in that trace, under the run's span as ``run_parent`` names it.
    """
    if trace_id:
        context = trace.set_span_in_context(run_parent(trace_id, run_id))
        links: list[Link] = []
    else:
        context = Context()
        started_by = trace.get_current_span().get_span_context()
        links = [Link(started_by)] if started_by.is_valid else []
    with tracer().start_as_current_span(
        name, context=context, attributes=attributes, links=links
    ) as current:
        yield current


def run_parent(trace_id: str, run_id: str) -> NonRecordingSpan:
    """The parent of a resumed run's spans: the run's trace, under a span id derived from
    its run id. The run's first span ended on the worker that paused it, and only the
    trace id is stored, so this parent is never exported: tracing UIs show the resumed
    part beside the run's span, in its trace."""
    span_id = (uuid.UUID(run_id).int & 0xFFFF_FFFF_FFFF_FFFF) or 1
    context = SpanContext(
        trace_id=int(trace_id, 16),
        span_id=span_id,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    return NonRecordingSpan(context)


def record_span(
    name: str,
    attributes: Mapping[str, Any],
    *,
    started: datetime,
    trace_id: str,
    run_id: str,
) -> None:
    """A span of the run's trace that already happened (an approval wait: it starts on
    one worker and may end on another), from ``started`` to now."""
    parent = trace.set_span_in_context(run_parent(trace_id, run_id))
    start = int(started.timestamp() * 1_000_000_000)
    tracer().start_span(name, context=parent, attributes=attributes, start_time=start).end()


def current_span() -> Span:
    return trace.get_current_span()


def emit(steps: Iterable[Step]) -> None:
    """Spans of steps that happened (``steps``): as ``span`` would have made them, with
    the times they were measured at, each under the span current when it began."""
    made_by = tracer()
    for step in steps:
        made = made_by.start_span(
            step.name,
            context=trace.set_span_in_context(step.parent),
            attributes=step.attributes,
            start_time=step.started_ns,
        )
        for name, attributes, at in step.events:
            made.add_event(name, attributes, timestamp=at)
        ended = step.ended_ns or time.time_ns()
        if step.error is not None:  # as ``start_as_current_span`` records one
            made.record_exception(step.error, timestamp=ended, escaped=True)
            made.set_status(Status(StatusCode.ERROR, f"{type(step.error).__name__}: {step.error}"))
        made.end(end_time=ended)


def trace_id_of(current: Any) -> str:
    """The 32 hex digits of a span's trace, or "" for one that records nothing."""
    context = current.get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else ""


def set_error(current: Span, code: str) -> None:
    current.set_status(Status(StatusCode.ERROR, code or None))


# Metrics.


@dataclass(frozen=True)
class Instruments:
    runs_started: metrics.Counter
    runs_ended: metrics.Counter
    runs_active: metrics.UpDownCounter
    streams_open: metrics.UpDownCounter
    first_token: metrics.Histogram
    tokens: metrics.Counter


@cache
def instruments() -> Instruments:
    """Made on first use, on the global meter provider (the API's proxy hands over to
    the project's provider when it is set)."""
    meter = metrics.get_meter(SCOPE)
    return Instruments(
        runs_started=meter.create_counter(
            "agent_sessions.runs.started", unit="{run}", description="Runs started or resumed."
        ),
        runs_ended=meter.create_counter(
            "agent_sessions.runs.ended",
            unit="{run}",
            description="Runs that ended or paused, by status and error code.",
        ),
        runs_active=meter.create_up_down_counter(
            "agent_sessions.runs.active", unit="{run}", description="Runs running in this worker."
        ),
        streams_open=meter.create_up_down_counter(
            "agent_sessions.streams.open",
            unit="{stream}",
            description="Tabs (websockets, SSE streams) of this worker following a conversation.",
        ),
        first_token=meter.create_histogram(
            "agent_sessions.run.time_to_first_token",
            unit="s",
            description="From a run's start to its first text sent to the tabs.",
            explicit_bucket_boundaries_advisory=TTFT_BUCKETS,
        ),
        tokens=meter.create_counter(
            "agent_sessions.tokens", unit="{token}", description="Tokens spent, by model and type."
        ),
    )


def now() -> float:
    return time.perf_counter()
