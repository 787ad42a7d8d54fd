"""A run's own span and metrics (docs/operations.md, "Traces" and "Metrics").

``traced(facts)`` opens the run's span, current for the rest of the run's task, so that
every span made in it (the history read and saves, the publishes, the SDK's model and
tool spans from its instrumentation: the SDK's tasks copy the context) nests under it. A
run's first part is the span ``agent_sessions.run``, the root of the run's trace, whose
id is stored on the run record (the admin links it); the part after an approval wait is
``agent_sessions.resume`` in the same trace, beside ``agent_sessions.approval_wait``
(recorded when the wait is over, from the record's ``waited_at``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from agents import RunConfig
from agents.usage import Usage

from django_agent_sessions import telemetry
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.telemetry import settings, steps

logger = logging.getLogger(__name__)

RUN_SPAN = "agent_sessions.run"
RESUME_SPAN = "agent_sessions.resume"
WAIT_SPAN = "agent_sessions.approval_wait"


@dataclass(frozen=True)
class RunFacts:
    run_pk: int
    run_id: str
    session_id: str  # the conversation's id
    agent_name: str
    model: str
    resumed: bool = False

    def attributes(self) -> dict[str, Any]:
        return {
            "gen_ai.conversation.id": self.session_id,
            "agent_sessions.run.id": self.run_id,
            "gen_ai.agent.name": self.agent_name,
            "agent_sessions.run.resumed": self.resumed,
        }


class RunTrace:
    """What a run's task tells its span and the metrics as it goes."""

    def __init__(self, facts: RunFacts, span: Any, *, metered: bool = True) -> None:
        self.facts = facts
        self.span = span
        self.metered = metered  # False: telemetry is off, nothing is measured

    def waiting(self, calls: int) -> None:
        """The run pauses for approvals: its span ends with it."""
        self.span.add_event("agent_sessions.approval.requested", {"agent_sessions.calls": calls})

    def ended(self, status: str, error_code: str, usage: Usage, *, final: bool) -> None:
        """The task is over (``final``: the run too; else it waits). Tokens are counted
        at the run's end only: a resumed run's usage includes what it spent before."""
        span, otel = self.span, telemetry.otel
        if otel is None or not self.metered:
            return
        if span.is_recording():
            span.set_attributes(
                {
                    "agent_sessions.run.status": status,
                    "agent_sessions.usage.requests": usage.requests,
                    "gen_ai.usage.input_tokens": usage.input_tokens,
                    "gen_ai.usage.output_tokens": usage.output_tokens,
                    "agent_sessions.usage.total_tokens": usage.total_tokens,
                }
            )
            if error_code:
                span.set_attribute("agent_sessions.run.error_code", error_code)
                otel.set_error(span, error_code)
        meters = otel.instruments()
        ended = {"gen_ai.agent.name": self.facts.agent_name, "agent_sessions.run.status": status}
        meters.runs_ended.add(1, {**ended, "agent_sessions.run.error_code": error_code})
        if final:
            model = {"gen_ai.request.model": self.facts.model}
            meters.tokens.add(usage.input_tokens, {**model, "gen_ai.token.type": "input"})
            meters.tokens.add(usage.output_tokens, {**model, "gen_ai.token.type": "output"})


@asynccontextmanager
async def traced(facts: RunFacts) -> AsyncIterator[RunTrace]:
    """The run's span and metrics for the block, which is the rest of the run's task."""
    otel = telemetry.otel
    if otel is None or not settings.enabled():
        yield RunTrace(facts, telemetry.NO_SPAN, metered=False)
        return
    tracing, trace_id = otel.tracing(), ""
    if facts.resumed and tracing:
        trace_id = await _after_wait(facts)
    name = RESUME_SPAN if trace_id else RUN_SPAN
    meters = otel.instruments()
    counted: Mapping[str, Any] = {
        "gen_ai.agent.name": facts.agent_name,
        "agent_sessions.run.resumed": facts.resumed,
    }
    spanned = (
        otel.root_span(name, facts.attributes(), trace_id=trace_id, run_id=facts.run_id)
        if tracing
        else nullcontext(telemetry.NO_SPAN)  # only metrics, if a meter provider is set
    )
    with spanned as span:
        new_trace = "" if trace_id or not tracing else otel.trace_id_of(span)
        meters.runs_started.add(1, counted)
        meters.runs_active.add(1)
        log = steps.StepLog()
        timed = steps.current.set(log)  # the run's first steps, for ``telemetry.span``
        telemetry.first_tokens[facts.run_id] = (otel.now(), span, log)
        try:
            yield RunTrace(facts, span)
        finally:
            telemetry.first_tokens.pop(facts.run_id, None)
            steps.current.reset(timed)
            # A task the run started keeps its context: its steps are spans from now on.
            log.timing = False
            _emit(otel, facts, log)
            meters.runs_active.add(-1)
            if new_trace:
                await _note(facts, new_trace)


def _emit(otel: ModuleType, facts: RunFacts, log: steps.StepLog) -> None:
    """The spans of the run's timed steps; a failure is logged: the run's end goes on."""
    try:
        otel.emit(log.steps)
    except Exception:
        logger.exception("Could not record the first steps of run %s.", facts.run_id)


async def _after_wait(facts: RunFacts) -> str:
    """The run's trace id, once its approval wait is recorded ("" if it has none)."""
    try:
        trace_id, waited_at = await store_runs.trace_of(facts.run_pk)
    except Exception:
        logger.exception("Could not read the trace of run %s.", facts.run_id)
        return ""
    if trace_id and waited_at is not None and telemetry.otel is not None:
        telemetry.otel.record_span(
            WAIT_SPAN,
            facts.attributes(),
            started=waited_at,
            trace_id=trace_id,
            run_id=facts.run_id,
        )
    return trace_id


async def _note(facts: RunFacts, trace_id: str) -> None:
    """Store the run's trace id once its end (or pause) is recorded and published: an
    extra write at its start would queue before the history reads of the runs starting
    with it (one sync thread, one SQLite writer) and delay their first tokens."""
    try:
        await store_runs.note_trace(facts.run_pk, trace_id)
    except Exception:
        logger.exception("Could not store the trace id of run %s.", facts.run_id)


def run_config() -> RunConfig | None:
    """The SDK's run settings while a tracer provider is set: its own spans (and so any
    instrumentation's) hold no message text unless ``TRACE_MESSAGES``. None otherwise:
    nothing changes for a project that does not trace."""
    otel = telemetry.otel
    if otel is None or not settings.enabled() or not otel.tracing():
        return None
    return RunConfig(trace_include_sensitive_data=settings.trace_messages())
