"""The agent of the budget tests' worker processes: each message costs one model call
of ``CALL_TOKENS`` tokens, and every call is noted, with the message it answers, in the
file ``AGENT_SESSIONS_TEST_CALL_LOG`` names (appended whole lines: every worker writes
to it), so a test sees which messages reached the model."""

from __future__ import annotations

import json
import os
from typing import Any

from agents import Agent
from agents.testing import ModelStep, ScriptedModel
from agents.testing.model import ModelCall
from agents.usage import Usage

from tests.scripted import streamed_reply

CALL_TOKENS = 100


def _step(call: ModelCall) -> ModelStep:
    last = call.input[-1] if isinstance(call.input, list) else {"content": call.input}
    text = str(last.get("content", ""))
    with open(os.environ["AGENT_SESSIONS_TEST_CALL_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(text) + "\n")
    usage = Usage(requests=1, input_tokens=60, output_tokens=40, total_tokens=CALL_TOKENS)
    return streamed_reply(f"Noted: {text}", usage=usage)


def make_agent() -> Agent[Any]:
    return Agent(name="Budget", model=ScriptedModel([ModelStep.respond(_step)]))
