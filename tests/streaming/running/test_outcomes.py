"""``outcomes``: how a run ended, settled from real streamed results of the SDK's
``Runner`` (completed, paused on approvals) or from an error, then told to the browser
in safe words (never the exception's text) and to the run record."""

from __future__ import annotations

from typing import Any

import pytest
from agents import (
    Agent,
    GuardrailFunctionOutput,
    InputGuardrail,
    InputGuardrailResult,
    OutputGuardrail,
    OutputGuardrailResult,
    Runner,
)
from agents.exceptions import (
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    OutputGuardrailTripwireTriggered,
)
from agents.usage import Usage
from pydantic import BaseModel

from django_agent_sessions.streaming.running import outcomes
from django_agent_sessions.streaming.running.outcomes import Outcome
from tests.approval_agent import payment_agent, two_payments
from tests.scripted import ScriptedModel, streamed_reply


def _tripped(context: Any, agent: Any, value: Any) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="secret detail", tripwire_triggered=True)


TRIPPED = GuardrailFunctionOutput(output_info="secret detail", tripwire_triggered=True)
TRIPPED_INPUT = InputGuardrailResult(InputGuardrail(_tripped), TRIPPED)
TRIPPED_OUTPUT = OutputGuardrailResult(
    OutputGuardrail(_tripped), agent_output="x", agent=Agent(name="A"), output=TRIPPED
)
USAGE = Usage(requests=1, input_tokens=11, output_tokens=7, total_tokens=18)


async def streamed(agent: Agent[Any], text: str) -> Any:
    result = Runner.run_streamed(agent, text)
    async for _event in result.stream_events():
        pass
    return result


def settled(result: Any, error: BaseException | None = None, **kwargs: Any) -> Outcome:
    outcome = Outcome()
    options = {"cancelled": False, "max_bytes": None, "run_id": "r1", **kwargs}
    outcomes.settle(outcome, result, error, **options)
    return outcome


async def test_a_completed_run_keeps_its_output_and_usage() -> None:
    agent = Agent(name="A", model=ScriptedModel([streamed_reply("Hello.", usage=USAGE)]))
    outcome = settled(await streamed(agent, "Hi"))
    assert (outcome.status, outcome.final_output, outcome.error_code) == ("completed", "Hello.", "")
    assert outcomes.terminal(outcome) == (
        "run.completed",
        {
            "final_output": "Hello.",
            "usage": {"requests": 1, "input_tokens": 11, "output_tokens": 7, "total_tokens": 18},
        },
    )


async def test_a_run_stopped_on_approvals_waits_with_its_state_and_calls() -> None:
    outcome = settled(await streamed(payment_agent(two_payments()), "Pay"))
    assert outcome.status == outcomes.WAITING
    assert outcome.state.startswith("{")
    assert [c.call_id for c in outcome.calls] == [
        "call-ann",
        "call-bob",
    ]


async def test_a_cancelled_run_is_cancelled_whatever_its_result() -> None:
    agent = Agent(name="A", model=ScriptedModel([streamed_reply("Hello.")]))
    outcome = settled(await streamed(agent, "Hi"), cancelled=True)
    assert outcome.status == "cancelled"
    assert outcomes.terminal(outcome) == ("run.cancelled", {})


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (MaxTurnsExceeded("secret detail"), "max_turns"),
        (InputGuardrailTripwireTriggered(TRIPPED_INPUT), "guardrail"),
        (OutputGuardrailTripwireTriggered(TRIPPED_OUTPUT), "guardrail"),
        (RuntimeError("secret detail"), "agent_error"),
    ],
)
def test_a_failed_run_tells_the_browser_a_code_and_never_the_exception(
    error: BaseException, code: str
) -> None:
    outcome = settled(None, error)
    assert (outcome.status, outcome.error_code) == ("failed", code)
    assert outcome.error.startswith(type(error).__name__)  # for the log and the record
    kind, fields = outcomes.terminal(outcome)
    assert kind == "run.failed"
    assert fields["error"]["code"] == code
    assert fields["error"]["message"]
    assert "secret" not in fields["error"]["message"]


def test_a_run_over_its_byte_budget_fails_as_too_large_even_when_cancelled() -> None:
    outcome = Outcome(error_code="run_too_large")
    outcomes.settle(outcome, None, None, cancelled=True, max_bytes=5000, run_id="r1")
    assert (outcome.status, outcome.error_code) == ("failed", "run_too_large")
    assert "5000" in outcome.error
    assert outcomes.terminal(outcome)[1]["error"]["code"] == "run_too_large"


def test_an_interrupted_run_ends_failed_with_its_own_code_and_seq() -> None:
    outcome = Outcome(status="completed")
    end = outcomes.interrupted_end(outcome, "r1", 12)
    assert outcome.status == outcomes.INTERRUPTED  # the record's status
    assert (end["type"], end["run_id"], end["seq"]) == ("run.failed", "r1", 12)
    assert end["error"]["code"] == "interrupted"
    assert end["error"]["message"]


class Weather(BaseModel):
    city: str


def test_final_outputs_become_json() -> None:
    assert outcomes.jsonable(Weather(city="Oslo")) == {"city": "Oslo"}
    assert outcomes.jsonable({"a": [1]}) == {"a": [1]}
    assert outcomes.jsonable(None) is None
    assert outcomes.jsonable(object).startswith("<class")  # anything else as text
    assert outcomes.usage_dict(Usage()) == {
        "requests": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "total_tokens": 0,
    }
