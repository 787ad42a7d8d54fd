"""``AGENT_SESSIONS["TELEMETRY"]``: what the app's traces may hold and where they are shown.

Read on use (never at import), merged over :data:`DEFAULTS`; the merged dict is kept
until the setting changes (``conf`` forgets its kept values on ``setting_changed``).
"""

from __future__ import annotations

from typing import Any

from django_agent_sessions.conf import app_settings

DEFAULTS: dict[str, Any] = {
    # Spans and metrics through the OpenTelemetry API (a no-op until the project sets a
    # tracer or meter provider). False: the app calls none of it.
    "ENABLED": True,
    # Message text (the person's, the model's, tool arguments and outputs) in spans: never
    # by default. The SDK's own spans drop it too while tracing is on (its RunConfig's
    # trace_include_sensitive_data), so no instrumentation exports it.
    "TRACE_MESSAGES": False,
    # The admin links a run to its trace: a URL with {trace_id}, for example
    # "https://jaeger.example/trace/{trace_id}". None: the trace id is shown as text.
    "TRACE_URL": None,
}

_kept: list[Any] = [object(), DEFAULTS]  # (the setting's value, the merged options)


def options() -> dict[str, Any]:
    value = app_settings.TELEMETRY
    if value is not _kept[0]:
        _kept[:] = [value, {**DEFAULTS, **(value or {})}]
    merged: dict[str, Any] = _kept[1]
    return merged


def enabled() -> bool:
    return bool(options()["ENABLED"])


def trace_messages() -> bool:
    return bool(options()["TRACE_MESSAGES"])


def trace_url(trace_id: str) -> str | None:
    """The operator's page of the trace, or None when no ``TRACE_URL`` is set."""
    template = options()["TRACE_URL"]
    return str(template).format(trace_id=trace_id) if template and trace_id else None
