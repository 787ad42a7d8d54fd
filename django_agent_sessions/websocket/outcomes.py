"""How a run ended, in the words each audience needs: the run record's status, the
browser's safe error code and message, the log's details, and token usage as a dict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.exceptions import (
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    OutputGuardrailTripwireTriggered,
)
from agents.usage import Usage
from django.utils.translation import gettext as _

from django_agent_sessions.models import AgentRun

# One vocabulary for how a run ended: the run record's.
COMPLETED = str(AgentRun.Status.COMPLETED)
CANCELLED = str(AgentRun.Status.CANCELLED)
FAILED = str(AgentRun.Status.FAILED)


@dataclass
class Outcome:
    """How a run ended, once ``events()`` is exhausted."""

    status: str = FAILED
    usage: Usage = field(default_factory=Usage)
    final_output: Any = None
    error_code: str = ""
    error: str = ""  # for logs and the run record, never sent to the browser
    message: str = ""  # safe to show


def usage_dict(usage: Usage) -> dict[str, int]:
    return {
        "requests": usage.requests,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }


_ERRORS: list[tuple[type[BaseException], str, Callable[[], str]]] = [
    (MaxTurnsExceeded, "max_turns", lambda: _("The agent took too many steps and was stopped.")),
    (
        InputGuardrailTripwireTriggered,
        "guardrail",
        lambda: _("The message was blocked by a safety check."),
    ),
    (
        OutputGuardrailTripwireTriggered,
        "guardrail",
        lambda: _("The reply was blocked by a safety check."),
    ),
]


def describe_error(error: BaseException) -> tuple[str, str]:
    """A code and a message safe to show: never the exception's own text."""
    for error_type, code, message in _ERRORS:
        if isinstance(error, error_type):
            return code, message()
    return "agent_error", _("The agent failed to answer. Please try again.")


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool | list | dict):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return str(value)
