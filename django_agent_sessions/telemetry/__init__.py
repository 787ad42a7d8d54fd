"""OpenTelemetry traces and metrics of the app's own steps (docs/operations.md).

Everything goes through the OpenTelemetry API, imported once, here: when it is not
installed, every call below returns at its first line (a shared do-nothing span, no
allocation). With the API and no SDK configured, the API's own no-ops do the work; the
project's tracer and meter providers decide what is recorded and where it goes.
``AGENT_SESSIONS["TELEMETRY"]`` (``telemetry.settings``) can turn it all off.

``span()`` is for a step of a run (a history read, a save, a publish; before the run's
first token only timed, see ``steps``); ``runs.RunTrace`` is a run's own span and
metrics; ``first_tokens`` is watched by ``streaming.fanout``.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any, Protocol

from django_agent_sessions.telemetry import settings, steps

otel: ModuleType | None
try:
    from django_agent_sessions.telemetry import live as otel
except ImportError:  # the API is not installed: tests/telemetry/test_without_otel.py
    otel = None


class SpanLike(Protocol):
    def set_attribute(self, key: str, value: Any) -> Any: ...

    def add_event(self, name: str, attributes: Any = None) -> Any: ...

    def set_attributes(self, attributes: Any) -> Any: ...

    def is_recording(self) -> bool: ...


class _NoSpan:
    """What every call gives when nothing is traced: a span that records nothing."""

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set_attribute(self, key: str, value: Any) -> None:
        return None

    def set_attributes(self, attributes: Any) -> None:
        return None

    def add_event(self, name: str, attributes: Any = None) -> None:
        return None

    def is_recording(self) -> bool:
        return False


NO_SPAN = _NoSpan()

# The spans of a run's steps (docs/operations.md); the run's own are in ``runs``.
HISTORY_READ = "agent_sessions.history.read"
HISTORY_SAVE = "agent_sessions.history.save"
PUBLISH = "agent_sessions.publish"

# Runs of this process that have sent no text yet: run id -> their start (a
# ``perf_counter``, for the time to first token), their span and their ``steps.StepLog``.
# Empty unless telemetry is on.
first_tokens: dict[str, tuple[float, Any, steps.StepLog]] = {}


def active() -> bool:
    """Whether the app calls OpenTelemetry at all: the API is importable and the
    setting does not turn it off."""
    return otel is not None and settings.enabled()


def span(
    name: str, attributes: Mapping[str, Any] | None = None
) -> AbstractContextManager[SpanLike]:
    """A child span of the current one, for the block (``NO_SPAN`` when off, or when no
    tracer provider is set: the API's span would record nothing either)."""
    if otel is None or not settings.enabled() or not otel.tracing():
        return NO_SPAN
    log = steps.current.get()
    if log is not None and log.timing:  # a run's step before its first token: ``steps``
        return log.step(name, attributes, otel.current_span())
    managed: AbstractContextManager[SpanLike] = otel.span(name, attributes)
    return managed


def first_token(run_id: str) -> None:
    """The run's first text reached its tabs (``fanout``): its time to first token."""
    started = first_tokens.pop(run_id, None)
    if started is not None and otel is not None:
        began, run_span, log = started
        log.timing = False  # its next steps are spans at once
        seconds = otel.now() - began
        otel.instruments().first_token.record(seconds)
        run_span.set_attribute("agent_sessions.run.time_to_first_token_ms", seconds * 1000)


def stream_opened() -> None:
    """A tab of this worker follows a conversation (``agent_sessions.streams.open``)."""
    if otel is not None and settings.enabled():
        otel.instruments().streams_open.add(1)


def stream_closed() -> None:
    if otel is not None and settings.enabled():
        otel.instruments().streams_open.add(-1)
