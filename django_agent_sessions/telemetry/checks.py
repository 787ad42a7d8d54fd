"""System check of ``AGENT_SESSIONS["TELEMETRY"]`` (id E090).

A mistake here would otherwise surface late: an unknown key is silently ignored, and a
``TRACE_URL`` without ``{trace_id}`` (or with another placeholder) breaks the admin's run
page only once a traced run is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.checks import CheckMessage, Error

from django_agent_sessions.conf import app_settings
from django_agent_sessions.telemetry.settings import DEFAULTS

_ID = "django_agent_sessions.E090"
_HINT = (
    'Use a dict with the keys "ENABLED" and "TRACE_MESSAGES" (True or False) and '
    '"TRACE_URL" (None or a URL with {trace_id}), or None for the defaults.'
)


def check_telemetry(**kwargs: Any) -> list[CheckMessage]:
    value = app_settings.TELEMETRY if app_settings.is_dict() else None
    problem = problem_of(value)
    if problem is None:
        return []
    return [Error(f"AGENT_SESSIONS['TELEMETRY'] {problem}.", hint=_HINT, id=_ID)]


def problem_of(value: Any) -> str | None:
    """What is wrong with the setting's value, or None."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        return f"is {value!r}; it must be a dict"
    unknown = sorted(set(value) - set(DEFAULTS), key=str)
    if unknown:
        return f"has unknown keys {unknown!r}"
    for key in ("ENABLED", "TRACE_MESSAGES"):
        if key in value and not isinstance(value[key], bool):
            return f"[{key!r}] is {value[key]!r}; it must be True or False"
    return _url_problem(value.get("TRACE_URL"))


def _url_problem(template: Any) -> str | None:
    if template is None:
        return None
    if not isinstance(template, str) or "{trace_id}" not in template:
        return f"['TRACE_URL'] is {template!r}; it must be None or a text with {{trace_id}}"
    try:
        template.format(trace_id="0" * 32)
    except (KeyError, IndexError, ValueError) as error:
        return f"['TRACE_URL'] is {template!r}; it cannot be formatted ({error!r})"
    return None
