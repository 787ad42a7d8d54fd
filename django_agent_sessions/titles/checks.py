"""System check of ``AGENT_SESSIONS["TITLES"]`` (id E110).

A bad value would otherwise fail silently: titles are written in the background, after
the reply, where nobody sees an error but the log.
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error
from django.utils.module_loading import import_string

from django_agent_sessions.conf import app_settings
from django_agent_sessions.titles.settings import FUNCTION, problem_of

_ID = "django_agent_sessions.E110"
_HINT = (
    'Use None (titles are the start of the first message), "agent" (the model of the '
    'agent that replied), {"MODEL": "<model name>"} or {"FUNCTION": "<dotted path to a '
    'function (message, reply) -> title>"}.'
)


def check_titles(**kwargs: Any) -> list[CheckMessage]:
    value = app_settings.TITLES if app_settings.is_dict() else None
    problem = problem_of(value) or _unimportable(value)
    if problem is None:
        return []
    return [Error(f"AGENT_SESSIONS['TITLES'] {problem}.", hint=_HINT, id=_ID)]


def _unimportable(value: Any) -> str | None:
    """A ``FUNCTION`` that does not import, or is not callable."""
    if not isinstance(value, dict) or FUNCTION not in value:
        return None
    try:
        function = import_string(value[FUNCTION])
    except ImportError as error:
        return f"names {value[FUNCTION]!r}, which does not import ({error})"
    return None if callable(function) else f"names {value[FUNCTION]!r}, which is not callable"
