"""``start_run``: a run started from code, with no tab open, inline and as a task (the
immediate backend here: the task hands the run to this process's run host), on the
real SDK Runner with a scripted model and the real database and channel layer."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.test import override_settings

from django_agent_sessions import DjangoSession, start_run
from django_agent_sessions.exceptions import RunRefused
from django_agent_sessions.layers import stream_layer
from django_agent_sessions.models import AgentRun, RunOrder
from django_agent_sessions.streaming.running import lifecycle
from tests.chat_agent import make_demo_agent

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "tests.chat_agent.make_demo_agent"
TASKS = {"AGENT": AGENT, "RUNS": "tasks", "RATE_LIMIT": None}
INLINE = {"AGENT": AGENT, "RATE_LIMIT": None}


async def ended(run_id: str) -> AgentRun:
    """The run's record once it ended (waits for the event, bounded)."""
    for _ in range(400):
        run = await AgentRun.objects.aget(run_id=run_id)
        if run.status not in ("running", "waiting"):
            return run
        await asyncio.sleep(0.025)
    raise AssertionError(f"run {run_id} did not end: {run.status}")


@pytest.mark.parametrize("runs", [INLINE, TASKS], ids=["inline", "tasks"])
async def test_a_run_started_from_code_answers_and_is_stored(runs):
    with override_settings(AGENT_SESSIONS=runs):
        run_id = await start_run("from-code", "Hello there")
        run = await ended(run_id)
    assert run.status == "completed"
    items = await DjangoSession("from-code").get_items()
    assert items[0] == {"role": "user", "content": "Hello there"}
    assert items[-1]["role"] == "assistant"
    order = await RunOrder.objects.aget(run=run)
    assert (order.origin, order.detached, order.claimed) == ("code", True, 1)


async def test_a_second_run_in_the_same_conversation_is_busy():
    with override_settings(AGENT_SESSIONS=TASKS):
        first = await start_run("busy-one", "a long story")
        with pytest.raises(RunRefused) as refused:
            await start_run("busy-one", "Second")
        assert refused.value.code == "busy"
        run = await AgentRun.objects.select_related("session").aget(run_id=first)
        await lifecycle.cancel(stream_layer(), run.session.pk, run_id=first, user=None)
        assert (await ended(first)).status == "cancelled"


async def test_a_new_conversation_each_time_without_an_id():
    with override_settings(AGENT_SESSIONS=TASKS):
        run = await ended(await start_run(None, "Anyone there?"))
    assert run.status == "completed"


async def test_tasks_take_the_agent_by_its_path():
    with override_settings(AGENT_SESSIONS=TASKS), pytest.raises(TypeError, match="dotted"):
        await start_run("by-object", "Hi", agent=make_demo_agent())


async def test_an_owners_rate_limit_and_token_budget_apply(make_user):
    ann = await sync_to_async(make_user)("ann")
    limited = {**TASKS, "RATE_LIMIT": "1/m"}
    with override_settings(AGENT_SESSIONS=limited):
        await ended(await start_run("limit-1", "First", owner=ann))
        with pytest.raises(RunRefused) as refused:
            await start_run("limit-2", "Second", owner=ann)
    assert refused.value.code == "rate_limited"
    assert refused.value.retry_after
    assert not await AgentRun.objects.filter(session__session_id="limit-2").aexists()

    spent = await AgentRun.objects.aget(session__session_id="limit-1")
    assert spent.total_tokens > 0
    budget = {**TASKS, "QUOTAS": {"TOKENS_PER_DAY": spent.total_tokens}}
    with override_settings(AGENT_SESSIONS=budget), pytest.raises(RunRefused) as refused:
        await start_run("limit-3", "Third", owner=ann)
    assert refused.value.code == "quota_exceeded"
    assert refused.value.resets_at is not None
