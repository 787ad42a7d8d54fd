"""``AGENT_SESSIONS["TITLES"]``: who writes a conversation's title after its first exchange.

- ``None`` (the default): nobody; the title stays the start of the first message.
- ``"agent"``: the model of the agent that ran the exchange.
- ``{"MODEL": "<model name>"}``: that model (through the SDK's default provider).
- ``{"FUNCTION": "<dotted path>"}``: a function ``(message, reply) -> str`` (it may be
  async), for projects without a model, or with rules of their own.

Read on use, never at import (``conf`` forgets kept values when the setting changes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django_agent_sessions.conf import app_settings

AGENT = "agent"
MODEL = "MODEL"
FUNCTION = "FUNCTION"


@dataclass(frozen=True)
class Titles:
    """What writes titles: the run's agent's model, a named model, or a function."""

    by: str  # AGENT, MODEL or FUNCTION
    name: str = ""  # the model's name or the function's dotted path


def problem_of(value: Any) -> str | None:
    """What is wrong with a value of the setting, or None."""
    if value is None or value == AGENT:
        return None
    if not isinstance(value, Mapping):
        return f"is {value!r}"
    if len(value) != 1 or next(iter(value)) not in (MODEL, FUNCTION):
        return f"is {dict(value)!r}: a dict with one key, {MODEL!r} or {FUNCTION!r}"
    name = next(iter(value.values()))
    if not isinstance(name, str) or not name.strip():
        return f"is {dict(value)!r}: its value must be a non-empty string"
    return None


def configured() -> Titles | None:
    """The setting as a ``Titles``, or None when titles are the first message's (also
    for a value the system check reports: a bad setting writes no titles)."""
    value = app_settings.TITLES
    if value is None or problem_of(value) is not None:
        return None
    if value == AGENT:
        return Titles(AGENT)
    [(by, name)] = value.items()
    return Titles(by, name.strip())
