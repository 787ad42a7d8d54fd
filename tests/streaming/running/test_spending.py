"""``spending``: what a run spends, model by model, on the real ``Runner``: a handoff to
an agent on another model adds a share, the shares are written with the run's lease
renewals (so a dead worker's run keeps them), its pause and its end, and a run past
``QUOTAS["RUN_TOKENS"]`` is stopped with a valid history."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from agents import Agent, RunConfig, function_tool, handoff
from agents.usage import Usage
from django.utils import timezone
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, RunModelUsage
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.streaming.running import run_task, spending
from tests import approval_agent
from tests.approval_agent import two_payments
from tests.scripted import ScriptedModel, function_call, streamed_reply
from tests.streaming.running import test_run_task
from tests.streaming.running.test_run_task import Conversation

pytestmark = pytest.mark.django_db(transaction=True)
conversation = test_run_task.conversation  # the fixture: a conversation, its events, its runs


def usage(total: int, cached: int = 0, reasoning: int = 0) -> Usage:
    return Usage(
        requests=1,
        input_tokens=total - 10,
        input_tokens_details=InputTokensDetails(cached_tokens=cached, cache_write_tokens=0),
        output_tokens=10,
        output_tokens_details=OutputTokensDetails(reasoning_tokens=reasoning),
        total_tokens=total,
    )


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def oslo(call_id: str) -> Any:
    return function_call("weather", {"city": "Oslo"}, call_id=call_id)


def named(model: ScriptedModel, name: str) -> ScriptedModel:
    model.model = name  # type: ignore[attr-defined] # as OpenAI's models keep their name
    return model


def test_the_model_name_is_the_one_the_sdk_calls():
    assert spending.model_name(Agent(name="a", model="gpt-small")) == "gpt-small"
    assert spending.model_name(Agent(name="a", model=named(ScriptedModel([]), "m-1"))) == "m-1"
    assert spending.model_name(Agent(name="a", model=ScriptedModel([]))) == "ScriptedModel"
    run_config = RunConfig(model="gpt-run")
    assert spending.model_name(Agent(name="a", model="gpt-small"), run_config) == "gpt-run"
    assert spending.model_name(Agent(name="a"))  # the SDK's default model


async def test_a_handoff_to_another_model_records_each_models_share(conversation: Conversation):
    billing = Agent(
        name="Billing",
        model=named(
            ScriptedModel([streamed_reply("Billed.", usage=usage(300, reasoning=20))]), "large"
        ),
    )
    triage_model = ScriptedModel(
        [
            streamed_reply(
                "",
                tool_calls=[function_call("transfer_to_billing", {}, call_id="call-handoff")],
                usage=usage(100, cached=40),
            )
        ]
    )
    triage = Agent(name="Triage", model=named(triage_model, "small"), handoffs=[handoff(billing)])
    active = await run_task.start(conversation.request(triage), channel_layer=conversation.layer)
    assert active is not None
    assert active.task is not None
    await conversation.until("run.completed")
    await active.task
    record = await AgentRun.objects.aget(run_id=active.run_id)
    assert (record.model, record.requests, record.total_tokens) == ("small", 2, 400)
    assert (record.cached_tokens, record.reasoning_tokens) == (40, 20)
    shares = {
        share.model: (
            share.requests,
            share.total_tokens,
            share.cached_tokens,
            share.reasoning_tokens,
        )
        async for share in RunModelUsage.objects.filter(run=record)
    }
    assert shares == {"small": (1, 100, 40, 0), "large": (1, 300, 0, 20)}


@pytest.mark.parametrize("end", ["completed", "cancelled", "lost"])
async def test_a_run_keeps_what_it_spent_however_it_ends(
    settings, conversation: Conversation, end: str
):
    """A lease renewal writes the spending so far: what a lost run keeps; a stopped run's
    end writes what its finished model calls spent (a call cut short reports nothing)."""
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RUN_LEASE_SECONDS": 0.3}
    gate = asyncio.Event()
    first = streamed_reply("", tool_calls=[oslo("call-1")], usage=usage(120))
    second = streamed_reply("Sunny and long.", gate=gate, usage=usage(80))
    agent = Agent(name="W", model=named(ScriptedModel([first, second]), "small"), tools=[weather])
    active = await run_task.start(conversation.request(agent), channel_layer=conversation.layer)
    assert active is not None
    assert active.task is not None
    await conversation.until("text.delta")  # the second response is held at its first token

    async def first_share_written() -> None:
        shares = RunModelUsage.objects.filter(run__run_id=active.run_id, total_tokens=120)
        while not await shares.aexists():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(first_share_written(), 10)  # a renewal wrote it, mid-run
    record = await AgentRun.objects.aget(run_id=active.run_id)
    assert (record.status, record.total_tokens, record.model) == ("running", 120, "small")
    if end == "lost":  # its worker dies: the lease runs out and a sweep ends it
        await active.leave()  # no more renewals
        past = timezone.now() - timedelta(seconds=1)
        await AgentRun.objects.filter(pk=record.pk).aupdate(lease_expires_at=past)
        assert [lost.run_id for lost in await store_runs.expire_stale()] == [active.run_id]
    if end == "completed":
        gate.set()
    else:
        active.cancel()
    await active.task
    await record.arefresh_from_db()
    share = await RunModelUsage.objects.aget(run=record)
    spent = 200 if end == "completed" else 120
    expected = {"completed": "completed", "cancelled": "cancelled", "lost": "failed"}[end]
    assert (record.status, record.total_tokens, share.total_tokens) == (expected, spent, spent)


async def test_a_paused_runs_spending_adds_up_across_its_resumption(conversation: Conversation):
    approval_agent.EXECUTED.clear()
    first = named(
        ScriptedModel([streamed_reply("", tool_calls=two_payments(), usage=usage(50))]), "small"
    )
    agent = Agent(name="Payments", model=first, tools=[approval_agent.send_payment])
    active = await run_task.start(
        conversation.request(agent, "Pay"), channel_layer=conversation.layer
    )
    assert active is not None
    assert active.task is not None
    await active.task  # waiting
    share = await RunModelUsage.objects.aget(run__run_id=active.run_id)
    assert share.total_tokens == 50
    resumed = Agent(
        name="Payments",
        model=named(ScriptedModel([streamed_reply("Paid.", usage=usage(70))]), "small"),
        tools=[approval_agent.send_payment],
    )
    assert await conversation.decide(resumed, "call-bob", False)
    assert await conversation.decide(resumed, "call-ann", True)
    await conversation.until("run.completed")
    record = await AgentRun.objects.aget(run_id=active.run_id)
    for _ in range(200):  # the end's record follows its event
        if record.status == "completed":
            break
        await asyncio.sleep(0.05)
        await record.arefresh_from_db()
    share = await RunModelUsage.objects.aget(run=record)
    assert (record.total_tokens, share.total_tokens, share.requests) == (120, 120, 2)


async def test_a_run_past_the_token_ceiling_is_stopped_with_a_valid_history(
    settings, conversation: Conversation
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": {"RUN_TOKENS": 150}}
    model = ScriptedModel(
        [
            streamed_reply("", tool_calls=[oslo("call-1")], usage=usage(100)),
            streamed_reply("", tool_calls=[oslo("call-2")], usage=usage(100)),
            streamed_reply("Never written.", usage=usage(100)),
        ]
    )
    agent = Agent(name="Weather", model=model, tools=[weather])
    active = await run_task.start(conversation.request(agent), channel_layer=conversation.layer)
    assert active is not None
    assert active.task is not None
    failed = (await conversation.until("run.failed", "run.completed"))[-1]
    assert failed["error"]["code"] == "run_token_limit"
    await active.task
    assert len(model.calls) == 2  # stopped before a third model call
    record = await AgentRun.objects.aget(run_id=active.run_id)
    assert (record.status, record.error_code, record.total_tokens) == (
        "failed",
        "run_token_limit",
        200,
    )
    items: list[Any] = await DjangoSession(conversation.session_id).get_items()
    calls = {item["call_id"] for item in items if item.get("type") == "function_call"}
    outputs = {item["call_id"] for item in items if item.get("type") == "function_call_output"}
    assert calls
    assert calls == outputs
