"""``tasks``: a run's task from its start (or its resumption after approvals) to its
pause or end, on the real SDK ``Runner`` (scripted models), the real database and
channel layer: the record comes first, one run per conversation, a run that stops on
approvals waits in the database holding no task, and the last decision resumes it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, AgentSession, ToolApproval
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.running import active_runs, run_task
from tests import approval_agent
from tests.approval_agent import payment_agent, two_payments
from tests.scripted import streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)


class Conversation:
    """A conversation, the events a socket of this process watching it gets, and runs."""

    def __init__(self, pk: int, session_id: str) -> None:
        self.pk, self.session_id = pk, session_id
        self.layer = get_channel_layer()
        self.channel = f"test-run_task.socket-{uuid.uuid4().hex}"
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        fanout.watch(pk, self.channel, lambda message: self.events.put_nowait(message["event"]))

    def request(self, agent: Agent[Any], text: str = "Hi") -> active_runs.RunRequest:
        return active_runs.RunRequest(
            agent=agent,
            text=text,
            session=DjangoSession(self.session_id),
            context=None,
            conversation_pk=self.pk,
            session_id=self.session_id,
            user=None,
            client_id="c-1",
        )

    async def until(self, *kinds: str) -> list[dict[str, Any]]:
        seen = [await asyncio.wait_for(self.events.get(), 10)]
        while seen[-1]["type"] not in kinds:
            seen.append(await asyncio.wait_for(self.events.get(), 10))
        return seen

    async def decide(self, agent: Agent[Any], call_id: str, approve: bool) -> bool:
        async def request() -> active_runs.RunRequest:
            return self.request(agent, "")

        return await run_task.decide(
            request,
            self.pk,
            call_id,
            approve=approve,
            message="" if approve else "Refused.",
            user=None,
            user_id=None,
            channel_layer=self.layer,
        )


@pytest.fixture
async def conversation(session_id: str) -> AsyncIterator[Conversation]:
    record = await AgentSession.objects.acreate(session_id=session_id)
    conversation = Conversation(int(record.pk), session_id)
    yield conversation
    fanout.unwatch(conversation.channel)
    for active in active_runs.local_runs():  # a run a failing test left going
        active.cancel()


async def test_a_run_is_recorded_first_and_ends_recorded(conversation: Conversation) -> None:
    agent = payment_agent(streamed_reply("Hello there."))
    active = await run_task.start(conversation.request(agent), channel_layer=conversation.layer)
    assert active is not None
    record = await AgentRun.objects.aget(session_id=conversation.pk)
    # Its id on the wire from the first event on is the record's.
    assert (str(record.run_id), record.status) == (active.run_id, "running")
    events = await conversation.until("run.completed")
    assert {e["run_id"] for e in events} == {active.run_id}
    assert events[1]["item"] == {
        "kind": "message",
        "role": "user",
        "text": "Hi",
        "client_id": "c-1",
    }
    assert active.task is not None
    await active.task
    await record.arefresh_from_db()
    assert (record.status, record.total_tokens) == ("completed", 18)
    items: list[Any] = await DjangoSession(conversation.session_id).get_items()
    assert [item["role"] for item in items] == ["user", "assistant"]
    assert active_runs.local_run(conversation.pk) is None


async def test_a_conversation_runs_one_run_at_a_time(conversation: Conversation) -> None:
    gate = asyncio.Event()
    first = await run_task.start(
        conversation.request(payment_agent(streamed_reply("First.", gate=gate))),
        channel_layer=conversation.layer,
    )
    assert first is not None
    second = conversation.request(payment_agent(streamed_reply("Second.")))
    assert await run_task.start(second, channel_layer=conversation.layer) is None
    gate.set()
    assert first.task is not None
    await first.task
    assert await AgentRun.objects.filter(session_id=conversation.pk).acount() == 1


async def test_a_run_stopped_on_approvals_waits_and_the_last_decision_resumes_it(
    conversation: Conversation,
) -> None:
    approval_agent.EXECUTED.clear()
    active = await run_task.start(
        conversation.request(payment_agent(two_payments()), "Pay Ann and Bob"),
        channel_layer=conversation.layer,
    )
    assert active is not None
    requested = [(await conversation.until("approval.requested"))[-1] for _ in range(2)]
    assert [e["call_id"] for e in requested] == ["call-ann", "call-bob"]
    assert all(e["expires_at"] for e in requested)
    assert active.task is not None
    await active.task  # a waiting run holds no task
    record = await AgentRun.objects.aget(run_id=active.run_id)
    assert (record.status, record.event_seq) == ("waiting", requested[-1]["seq"])
    assert active_runs.local_run(conversation.pk) is None

    resumed_agent = payment_agent(streamed_reply("Paid Ann."))
    assert not await conversation.decide(resumed_agent, "call-nobody", True)
    assert await conversation.decide(resumed_agent, "call-bob", False)
    resolved = (await conversation.until("approval.resolved"))[-1]
    assert (resolved["call_id"], resolved["approve"]) == ("call-bob", False)
    await record.arefresh_from_db()
    assert record.status == "waiting"  # a call is left to decide
    assert await conversation.decide(resumed_agent, "call-ann", True)
    after = await conversation.until("run.completed")
    assert [e["type"] for e in after[:2]] == ["approval.resolved", "run.started"]
    assert after[1]["resumed"] is True
    assert after[-1]["final_output"] == "Paid Ann."
    # The resumed run numbers on: one sequence from the first event to the end.
    assert after[1]["seq"] == resolved["seq"] + 2
    assert approval_agent.EXECUTED == ["ann"]
    decisions = ToolApproval.objects.filter(run__run_id=active.run_id).order_by("call_id")
    assert [d async for d in decisions.values_list("call_id", "decision")] == [
        ("call-ann", "approved"),
        ("call-bob", "rejected"),
    ]
