"""``traced``: a run's task body in its span. Without a tracer provider (the API's
default, as in every test outside tests/telemetry) the run is what it was: no span
recorded, no trace id stored, the SDK's run settings untouched."""

from __future__ import annotations

import pytest
from agents import Agent, OpenAIResponsesModel
from agents.testing import ScriptedModel
from openai import AsyncOpenAI

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.running import run_task, traced
from tests.scripted import streamed_reply
from tests.telemetry.conftest import Conversation


def test_a_model_is_named_for_the_metrics() -> None:
    assert traced.model_name(Agent(name="a", model="gpt-test")) == "gpt-test"
    assert traced.model_name(Agent(name="a")) == ""  # the SDK's default
    client = AsyncOpenAI(api_key="unused")
    model = OpenAIResponsesModel(model="gpt-named", openai_client=client)
    assert traced.model_name(Agent(name="a", model=model)) == "gpt-named"
    assert traced.model_name(Agent(name="a", model=ScriptedModel([]))) == "ScriptedModel"


def test_without_a_tracer_provider_the_sdk_settings_are_left_alone() -> None:
    assert traced.run_config() is None


@pytest.mark.django_db(transaction=True)
async def test_without_a_tracer_provider_a_run_stores_no_trace(session_id: str) -> None:
    record = await AgentSession.objects.acreate(session_id=session_id)
    conversation = Conversation(int(record.pk), session_id)
    agent = Agent(name="Plain", model=ScriptedModel([streamed_reply("Hello.")]))
    started = await run_task.start(conversation.request(agent), channel_layer=conversation.layer)
    assert started is not None
    assert started.task is not None
    await started.task
    fanout.unwatch(conversation.channel)
    run = await AgentRun.objects.aget(run_id=started.run_id)
    assert (run.status, run.trace_id) == ("completed", "")
