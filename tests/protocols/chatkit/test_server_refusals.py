"""``AgentChatKitServer`` at the door of a reply: the packaged chat's rate limit and
token budget hold for ChatKit's messages too; a refused message gets ChatKit's error
event with the chat's words, before any model call."""

from __future__ import annotations

import pytest
from agents import Agent

from django_agent_sessions.protocols.chatkit import ChatKitContext
from django_agent_sessions.protocols.chatkit.server import AgentChatKitServer
from tests.protocols.chatkit.helpers import add_message, create, of_type, streamed
from tests.scripted import ScriptedModel, streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel([streamed_reply("First."), streamed_reply("Never sent.")])


@pytest.fixture
def server(model: ScriptedModel) -> AgentChatKitServer:
    return AgentChatKitServer(agent=Agent(name="Assistant", model=model))


@pytest.fixture
def alice(make_user) -> ChatKitContext:
    return ChatKitContext(user=make_user("alice"))


async def test_a_message_past_the_rate_limit_gets_an_error_event(settings, server, model, alice):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RATE_LIMIT": "1/m"}
    first = await streamed(await server.process(create("Hello"), alice))
    assert of_type(first, "error") == []
    thread_id = of_type(first, "thread.created")[0].thread.id
    second = await streamed(await server.process(add_message(thread_id, "Again"), alice))
    [error] = of_type(second, "error")
    assert (error.message, error.allow_retry) == ("Too many messages; wait a moment.", True)
    assert len(model.calls) == 1  # refused before any model call


async def test_a_spent_token_budget_gets_an_error_event(settings, server, model, alice):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": {"TOKENS_PER_DAY": 0}}
    events = await streamed(await server.process(create("Hello"), alice))
    [error] = of_type(events, "error")
    assert error.message is not None
    assert "budget" in error.message
    assert len(model.calls) == 0  # refused before any model call
