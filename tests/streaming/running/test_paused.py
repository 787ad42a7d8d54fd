"""``paused``: a real run stopped on tool calls that need approval, turned into the SDK's
own text and back; the decisions are applied on restore (an undecided call is
rejected), and the resumed run executes only what was approved."""

from __future__ import annotations

import json
from typing import Any

from agents import Runner
from agents.items import ToolApprovalItem

from django_agent_sessions.store.approvals import RequestedCall
from django_agent_sessions.streaming.running import paused
from django_agent_sessions.streaming.visiting.context import AgentRunContext
from tests import approval_agent
from tests.approval_agent import PAYMENT_DESCRIPTION, payment_agent, two_payments
from tests.scripted import assistant_message


async def streamed(agent: Any, given: Any, context: Any = None) -> Any:
    """A real streamed run of ``agent`` on ``given`` (text or a state), to its end."""
    result = Runner.run_streamed(agent, given, context=context)
    async for _event in result.stream_events():
        pass
    return result


async def paused_run() -> tuple[str, list[RequestedCall]]:
    # The context websocket runs get by default (a project's may differ).
    scope = {"session_key": "secret-session-key"}
    context = AgentRunContext(user="alice", session_id="s", session=None, scope=scope)
    result = await streamed(payment_agent(two_payments()), "Pay Ann and Bob", context)
    return paused.pause(result)


async def test_a_paused_run_is_stored_as_text_with_the_calls_to_decide() -> None:
    text, calls = await paused_run()
    assert isinstance(text, str)
    assert '"send_payment"' in text
    ann, bob = (call.arguments for call in two_payments())  # as the model wrote them
    assert calls == [
        RequestedCall("call-ann", "send_payment", ann, PAYMENT_DESCRIPTION),
        RequestedCall("call-bob", "send_payment", bob, PAYMENT_DESCRIPTION),
    ]
    # The run context (user, scope, session) is never stored.
    assert json.loads(text)["context"]["context"] == {}
    assert "secret-session-key" not in text


async def test_a_dict_context_is_not_stored_either() -> None:
    """A project's ``get_run_context`` may return a dict; the SDK would store it as it
    is, secrets and objects JSON cannot encode included."""
    context = {"api_token": "secret-token", "user": object()}
    result = await streamed(payment_agent(two_payments()), "Pay Ann and Bob", context)
    text, calls = paused.pause(result)
    assert json.loads(text)["context"]["context"] == {}
    assert "secret-token" not in text
    assert [call.call_id for call in calls] == ["call-ann", "call-bob"]


async def test_a_restored_run_executes_what_was_approved_only() -> None:
    approval_agent.EXECUTED.clear()
    text, _calls = await paused_run()
    agent = payment_agent([assistant_message("Paid Ann.")])
    decisions = {"call-ann": (True, ""), "call-bob": (False, "Not Bob.")}
    state = await paused.restore(agent, text, decisions, context={"fresh": True})
    result = await streamed(agent, state)
    assert result.final_output == "Paid Ann."
    assert approval_agent.EXECUTED == ["ann"]
    outputs = {
        item["call_id"]: item["output"]
        for item in result.to_input_list()
        if item.get("type") == "function_call_output"
    }
    assert outputs["call-ann"] == "sent 5 to ann"
    assert outputs["call-bob"] == "Not Bob."  # the rejection's message is the tool output
    # The resuming worker's context, not one from the paused process.
    assert result.context_wrapper.context == {"fresh": True}


async def test_a_call_without_a_decision_is_rejected_not_left_hanging() -> None:
    approval_agent.EXECUTED.clear()
    text, _calls = await paused_run()
    agent = payment_agent([assistant_message("Nothing paid.")])
    state = await paused.restore(agent, text, {"call-ann": (True, "")}, context=None)
    result = await streamed(agent, state)
    assert result.interruptions == []  # it did not stop again on Bob's call
    assert approval_agent.EXECUTED == ["ann"]


def test_a_requested_call_reads_dict_items_and_non_text_arguments() -> None:
    agent = payment_agent()
    raw = {"type": "function_call", "id": "fc-1", "name": "send_payment", "arguments": None}
    item = ToolApprovalItem(agent=agent, raw_item=raw, tool_name=None)
    call = paused.requested_call(item)
    # No call_id: its id; arguments that are not text: as JSON ("{}" for none).
    assert call == RequestedCall("fc-1", "send_payment", "{}", PAYMENT_DESCRIPTION)
    unknown = ToolApprovalItem(
        agent=agent, raw_item={**raw, "arguments": {"a": "é"}}, tool_name="x"
    )
    assert paused.requested_call(unknown) == RequestedCall("fc-1", "x", '{"a": "\\u00e9"}', "")
