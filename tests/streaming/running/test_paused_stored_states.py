"""``paused``: runs paused and stored by the oldest supported ``openai-agents``
(tests/fixtures/run_states, made with 0.24.0) resume under the SDK installed, through the
app's own resume path (``run_task.decide``: the last decision restores the state and runs it
on), approved and rejected, with the real ``Runner`` and a scripted model: the run
completes and the history stays valid (the stored items untouched, then one output per
call, then the reply). ``test_paused_newest_sdk.py`` runs this module under the newest
release the project allows.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import __version__ as sdk_version
from agents.testing import assistant_message
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun
from django_agent_sessions.streaming.running import active_runs, run_task
from tests import approval_agent
from tests.fixtures.run_states import cases

pytestmark = pytest.mark.django_db(transaction=True)

REFUSED = "Refused."


def valid_history(items: list[Any]) -> None:
    """Each call answered once, after it; no output without its call; no item twice."""
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert sorted(calls) == sorted(outputs) == sorted(set(calls)), items
    for call_id in calls:
        kinds = [i.get("type") for i in items if i.get("call_id") == call_id]
        assert kinds == ["function_call", "function_call_output"], (call_id, items)


def test_the_fixtures_were_made_with_the_oldest_supported_sdk() -> None:
    from tests.fixtures.run_states.make import oldest_supported

    for case in cases.CASES:
        made_with = cases.read(case.name)["made_with"]["openai-agents"]
        assert made_with == oldest_supported(), case.name


@pytest.mark.parametrize("approve", [True, False], ids=["approved", "rejected"])
@pytest.mark.parametrize("name", [case.name for case in cases.CASES])
async def test_a_run_stored_by_the_oldest_sdk_resumes(
    name: str, approve: bool, session_id: str
) -> None:
    stored = cases.read(name)
    conversation_pk = await cases.store(stored, session_id)
    agent = cases.payments_agent([assistant_message(cases.FINAL_TEXT)])

    async def request() -> active_runs.RunRequest:
        return active_runs.RunRequest(
            agent=agent,
            text="",
            session=DjangoSession(session_id),
            context=None,
            conversation_pk=conversation_pk,
            session_id=session_id,
            user=None,
            client_id="",
        )

    approval_agent.EXECUTED.clear()
    for call in stored["approvals"]:
        decided = await run_task.decide(
            request,
            conversation_pk,
            call["call_id"],
            approve=approve,
            message="" if approve else REFUSED,
            user=None,
            user_id=None,
            channel_layer=get_channel_layer(),
        )
        assert decided, call
    active = active_runs.local_run(conversation_pk)
    assert active is not None, "the last decision resumed no run"
    assert active.task is not None
    await active.task

    record = await AgentRun.objects.aget(session_id=conversation_pk)
    assert (record.status, record.error) == ("completed", ""), f"openai-agents {sdk_version}"
    payments = [json.loads(c["arguments"]) for c in stored["approvals"]]
    paid = [p["to"] for p in payments] if approve else []
    assert paid == approval_agent.EXECUTED
    items: list[Any] = await DjangoSession(session_id).get_items()
    # What the older release stored stays as it was; the resumed run adds to it.
    assert items[: len(stored["items"])] == stored["items"]
    added = items[len(stored["items"]) :]
    outputs = {i["call_id"]: i["output"] for i in added if i.get("type") == "function_call_output"}
    assert outputs == {
        c["call_id"]: f"sent {p['amount']} to {p['to']}" if approve else REFUSED
        for c, p in zip(stored["approvals"], payments, strict=True)
    }
    assert len(added) == len(outputs) + 1, added
    assert added[-1]["role"] == "assistant"
    assert added[-1]["content"][0]["text"] == cases.FINAL_TEXT
    valid_history(items)
