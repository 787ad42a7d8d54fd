"""Tool approvals through the adapter: a paused run's response ends with its requests
(``tool-approval-request``), and the next request's approval responses decide them:
its response is the resumed run, in the same assistant message."""

from __future__ import annotations

from typing import Any

import pytest

from tests import chat_agent
from tests.approval_agent import two_payments
from tests.conversations import run_statuses
from tests.protocols.ai_sdk.asgi_client import get, send, user_message
from tests.protocols.ai_sdk.views_helpers import agent_settings, closing_calls, text_of, types  # noqa: F401
from tests.scripted import streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)


def responded(message: dict[str, Any], decisions: dict[str, bool]) -> dict[str, Any]:
    """The assistant message as ``addToolApprovalResponse`` leaves it."""
    parts = []
    for part in message["parts"]:
        if part.get("state") == "approval-requested":
            approval = {**part["approval"], "approved": decisions[part["toolCallId"]]}
            part = {**part, "state": "approval-responded", "approval": approval}
        parts.append(part)
    return {**message, "parts": parts}


async def test_approvals_are_requested_then_decided_in_the_next_request(alice_cookie, session_id):
    chat_agent.script(streamed_reply("", tool_calls=two_payments()), streamed_reply("Paid Ann."))
    asked = user_message("pay", "m-1")
    chunks = await send(session_id, alice_cookie, asked).body()
    run_id = chunks[0]["messageId"]
    requests = [c for c in chunks if isinstance(c, dict) and c["type"] == "tool-approval-request"]
    assert [(r["approvalId"], r["toolCallId"]) for r in requests] == [
        ("call-ann", "call-ann"),
        ("call-bob", "call-bob"),
    ]
    assert types(chunks)[-3:] == ["finish-step", "finish", "[DONE]"]
    assert chunks[-2] == {"type": "finish", "finishReason": "tool-calls"}
    assert await run_statuses(session_id) == ["waiting"]

    # Loading shows the calls waiting, as the stream left them.
    loaded = await get(session_id, "messages", alice_cookie).body()
    waiting = loaded[-1]
    assert waiting["id"] == run_id
    states = [(p["toolCallId"], p["state"]) for p in waiting["parts"] if "toolCallId" in p]
    assert states == [("call-ann", "approval-requested"), ("call-bob", "approval-requested")]

    decided = responded(waiting, {"call-ann": True, "call-bob": False})
    resumed = await send(session_id, alice_cookie, asked, decided).body()
    assert resumed[0] == {"type": "start", "messageId": run_id}  # the same message goes on
    outputs = [c["toolCallId"] for c in resumed[:-1] if c["type"] == "tool-output-available"]
    assert outputs == ["call-ann", "call-bob"]
    assert text_of(resumed) == "Paid Ann."
    assert resumed[-2] == {"type": "finish", "finishReason": "stop"}
    assert await run_statuses(session_id) == ["completed"]
    final = (await get(session_id, "messages", alice_cookie).body())[-1]
    states = [(p["toolCallId"], p["state"]) for p in final["parts"] if "toolCallId" in p]
    assert states == [("call-ann", "output-available"), ("call-bob", "output-available")]


async def test_a_decision_on_nothing_waiting_is_an_unknown_approval_chunk(alice_cookie, session_id):
    part = {"type": "tool-send_payment", "toolCallId": "call-x", "state": "approval-responded"}
    part["approval"] = {"id": "call-x", "approved": True}
    message = {"id": "run-x", "role": "assistant", "parts": [part]}
    chunks = await send(session_id, alice_cookie, user_message("pay"), message).body()
    assert types(chunks) == ["error", "[DONE]"]
    assert chunks[0]["errorText"].startswith("unknown_approval: ")
