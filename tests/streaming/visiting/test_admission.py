"""``admission``: what a message must pass before anything of it is written, with the
wire's codes: the sender's rate limit, then their token budget for the agent's model."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from agents import Agent
from asgiref.sync import sync_to_async

from django_agent_sessions.streaming.visiting import admission
from django_agent_sessions.streaming.wire import frames
from tests.budgets.test_quotas import _spend

pytestmark = pytest.mark.django_db(transaction=True)
AGENT = Agent(name="Assistant", model="small")


def _key() -> str:
    return f"user:{uuid.uuid4().hex}"  # the cache outlives a test: a user of its own


async def test_a_message_past_the_rate_limit_is_refused_rate_limited(settings: Any) -> None:
    settings.AGENT_SESSIONS = {"RATE_LIMIT": "1/d"}
    key = _key()
    await admission.within_rate(key, "c-1")
    with pytest.raises(frames.BadFrame) as refused:
        await admission.within_rate(key, "c-2")
    assert (refused.value.code, refused.value.client_id) == ("rate_limited", "c-2")
    assert refused.value.fields["retry_after"] > 0
    await admission.within_rate(_key(), "c-3")  # counted per person


async def test_a_spent_budget_is_refused_quota_exceeded(settings: Any, make_user: Any) -> None:
    settings.AGENT_SESSIONS = {"QUOTAS": {"TOKENS_PER_DAY": 100}}
    ann = await sync_to_async(make_user)("ann")
    await admission.within_budget(ann, AGENT, "c-1")
    await sync_to_async(_spend)(ann, 100)
    with pytest.raises(frames.BadFrame) as refused:
        await admission.within_budget(ann, AGENT, "c-2")
    assert (refused.value.code, refused.value.client_id) == ("quota_exceeded", "c-2")


async def test_admit_checks_the_rate_before_the_budget(settings: Any, make_user: Any) -> None:
    settings.AGENT_SESSIONS = {"RATE_LIMIT": "1/d", "QUOTAS": {"TOKENS_PER_DAY": 100}}
    ann = await sync_to_async(make_user)("ann")
    await sync_to_async(_spend)(ann, 100)
    key = _key()
    with pytest.raises(frames.BadFrame, match="budget"):
        await admission.admit(key, ann, AGENT)  # counted, then refused by the budget
    with pytest.raises(frames.BadFrame) as refused:
        await admission.admit(key, ann, AGENT)
    assert refused.value.code == "rate_limited"
