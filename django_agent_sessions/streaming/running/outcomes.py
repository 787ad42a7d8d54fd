"""How a run ended, in the words each audience needs: the run record's status, the
browser's safe error code and message, the log's details, and token usage as a dict.
"""

from __future__ import annotations

import logging
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
from django_agent_sessions.store.approvals import RequestedCall
from django_agent_sessions.streaming.running import paused

logger = logging.getLogger(__name__)

# One vocabulary for how a run ended: the run record's.
COMPLETED = str(AgentRun.Status.COMPLETED)
CANCELLED = str(AgentRun.Status.CANCELLED)
FAILED = str(AgentRun.Status.FAILED)
INTERRUPTED = str(AgentRun.Status.INTERRUPTED)
# Not an end: the run waits for decisions on tool calls that need approval.
WAITING = str(AgentRun.Status.WAITING)


@dataclass
class Outcome:
    """How a run ended, once ``events()`` is exhausted."""

    status: str = FAILED
    usage: Usage = field(default_factory=Usage)
    final_output: Any = None
    error_code: str = ""
    error: str = ""  # for logs and the run record, never sent to the browser
    message: str = ""  # safe to show
    # WAITING: the SDK's serialisation of the paused run, and the calls to decide.
    state: str = ""
    calls: list[RequestedCall] = field(default_factory=list)


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


def settle(
    outcome: Outcome,
    result: Any,
    error: BaseException | None,
    *,
    cancelled: bool,
    max_bytes: int | None,
    run_id: str,
) -> None:
    """Set how a streamed run ended: its status, usage, error, output or paused state."""
    if result is not None:
        outcome.usage = result.context_wrapper.usage
    if outcome.error_code == "run_too_large":
        outcome.status = FAILED
        outcome.error = f"The run streamed more than MAX_RUN_BYTES ({max_bytes})."
        outcome.message = _("The reply was too long and was stopped.")
    elif outcome.error_code == "run_token_limit":
        outcome.status = FAILED
        outcome.error = "The run spent more tokens than QUOTAS['RUN_TOKENS']."
        outcome.message = _("The reply used more tokens than one reply may, and was stopped.")
    elif error is not None:
        outcome.status = FAILED
        outcome.error_code, outcome.message = describe_error(error)
        outcome.error = f"{type(error).__name__}: {error}"
        logger.error("Agent run %s failed.", run_id, exc_info=error)
    elif cancelled:
        outcome.status = CANCELLED
    elif result.interruptions:
        _pause(outcome, result, run_id)
    else:
        outcome.status = COMPLETED
        outcome.final_output = jsonable(result.final_output)


def _pause(outcome: Outcome, result: Any, run_id: str) -> None:
    try:
        outcome.state, outcome.calls = paused.pause(result)
    except Exception as error:
        outcome.status = FAILED
        outcome.error_code, outcome.message = describe_error(error)
        outcome.error = f"Could not store the paused run: {type(error).__name__}: {error}"
        logger.exception("Run %s could not be paused for approvals.", run_id)
    else:
        outcome.status = WAITING


def terminal(outcome: Outcome) -> tuple[str, dict[str, Any]]:
    """The terminal event's type and fields for ``outcome``."""
    if outcome.status == COMPLETED:
        return "run.completed", {
            "final_output": outcome.final_output,
            "usage": usage_dict(outcome.usage),
        }
    if outcome.status == CANCELLED:
        return "run.cancelled", {}
    error = {
        "code": outcome.error_code or "agent_error",
        "message": outcome.message or _("The agent failed to answer. Please try again."),
    }
    return "run.failed", {"error": error}


def interrupted_end(outcome: Outcome, run_id: str, seq: int) -> dict[str, Any]:
    """The terminal event (numbered ``seq``) of a run its worker stopped because its
    drain time ran out (a deploy): failed, with the code ``interrupted``."""
    outcome.status, outcome.error_code = INTERRUPTED, "interrupted"
    outcome.error = "The worker stopped (a deploy) before the run finished."
    outcome.message = _("The server restarted while writing this reply. Please try again.")
    kind, fields = terminal(outcome)
    return {"type": kind, "run_id": run_id, "seq": seq, **fields}
