"""The agent of the adapter's live server: ``tests.chat_agent``'s weather tool on a
scripted model, with replies short enough for a browser test to wait for.

"weather" calls the tool, then says the forecast; "pay" asks to send two payments
(each needs approval: ``tests.approval_agent``), then says what the tool answered;
"long" writes a reply of a few seconds (time for a Stop or a reload mid-reply);
anything else is echoed.
"""

from __future__ import annotations

from typing import Any

from agents import Agent
from agents.testing import ModelCall, ModelStep

from tests.approval_agent import send_payment, two_payments
from tests.chat_agent import get_weather
from tests.scripted import ScriptedModel, streamed_reply, tool_turn

LONG = "and so the story goes on " * 12  # 100 tokens, 20 ms apart
PAYMENTS = ("call-ann", "call-bob")


def _step(call: ModelCall) -> ModelStep:
    last = call.input[-1] if isinstance(call.input, list) else {"content": call.input}
    if last.get("type") == "function_call_output" and last["call_id"] in PAYMENTS:
        outputs = [i for i in call.input if i.get("call_id") in PAYMENTS and "output" in i]
        return streamed_reply("Done: " + "; ".join(i["output"] for i in outputs), delay=0.01)
    if last.get("type") == "function_call_output":
        return streamed_reply(f"The forecast says {last['output']}.", delay=0.02)
    text = str(last.get("content", ""))
    if "weather" in text:
        return tool_turn("get_weather", {"city": "Paris"}, call_id=f"call-{len(call.input)}")
    if "pay" in text:
        return streamed_reply("", tool_calls=two_payments())
    if "long" in text:
        return streamed_reply(LONG, delay=0.02)
    return streamed_reply(f"You said: {text}", delay=0.01)


def make_agent() -> Agent[Any]:
    model = ScriptedModel([ModelStep.respond(_step) for _ in range(4)])
    return Agent(name="Demo", model=model, tools=[get_weather, send_payment])
