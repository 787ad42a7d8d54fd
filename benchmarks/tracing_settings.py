"""The streaming benchmark's worker with OpenTelemetry tracing and metrics on.

The OpenTelemetry SDK as a project would set it up: a tracer provider whose batch
processor hands the spans to an exporter in its own thread (here one that counts and
drops them: the app's cost is measured, not a collector's), and a meter provider whose
instruments aggregate every measurement (an in-memory reader, never read).
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from benchmarks.streaming_settings import *  # noqa: F403


class DroppingExporter(SpanExporter):
    """Counts the spans it is given and keeps none."""

    exported = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        DroppingExporter.exported += len(spans)
        return SpanExportResult.SUCCESS


_resource = Resource.create({"service.name": "agent-sessions-benchmark"})
_tracer_provider = TracerProvider(resource=_resource)
_tracer_provider.add_span_processor(BatchSpanProcessor(DroppingExporter()))
trace.set_tracer_provider(_tracer_provider)
metrics.set_meter_provider(
    MeterProvider(resource=_resource, metric_readers=[InMemoryMetricReader()])
)
ROOT_URLCONF = "benchmarks.tracing_switch"  # the floor view's URLs and the telemetry switch
