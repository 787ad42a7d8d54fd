"""The app's metrics through the OpenTelemetry API, read with the SDK's in-memory
reader: runs started and ended by outcome, time to first token, active runs and open
streams of this worker, tokens by model."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent
from agents.testing import ScriptedModel

from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.running import run_task
from tests.scripted import streamed_reply
from tests.telemetry.conftest import Conversation, Telemetry

pytestmark = pytest.mark.django_db(transaction=True)


class NamedModel(ScriptedModel):
    model = "gpt-test-mini"


async def run(conversation: Conversation, agent: Agent[Any]) -> None:
    started = await run_task.start(conversation.request(agent), channel_layer=conversation.layer)
    assert started is not None
    assert started.task is not None
    await started.task


def by(points: list[Any], **attributes: Any) -> list[Any]:
    return [p for p in points if all(p.attributes.get(k) == v for k, v in attributes.items())]


async def test_runs_tokens_and_the_first_token_are_counted(
    otel: Telemetry, conversation: Conversation
) -> None:
    agent = Agent(name="Metered", model=NamedModel([streamed_reply("Hi."), streamed_reply("Ho.")]))
    await run(conversation, agent)
    await run(conversation, agent)
    await run(conversation, Agent(name="Metered", model=ScriptedModel([])))  # fails

    [started] = otel.points("agent_sessions.runs.started")
    assert started.value == 3
    ended = otel.points("agent_sessions.runs.ended")
    assert [p.value for p in by(ended, **{"agent_sessions.run.status": "completed"})] == [2]
    [failed] = by(ended, **{"agent_sessions.run.status": "failed"})
    assert failed.value == 1
    assert failed.attributes["agent_sessions.run.error_code"]
    [ttft] = otel.points("agent_sessions.run.time_to_first_token")
    assert ttft.count == 2  # the failed run sent no text
    assert ttft.sum > 0
    [active] = otel.points("agent_sessions.runs.active")
    assert active.value == 0
    tokens = otel.points("agent_sessions.tokens")
    model = {"gen_ai.request.model": "gpt-test-mini"}
    assert [p.value for p in by(tokens, **model, **{"gen_ai.token.type": "input"})] == [22]
    assert [p.value for p in by(tokens, **model, **{"gen_ai.token.type": "output"})] == [14]


def test_open_streams_follow_the_tabs_of_this_worker(otel: Telemetry) -> None:
    fanout.watch(1, "tab-a", lambda message: None)
    fanout.watch(2, "tab-b", lambda message: None)
    fanout.watch(3, "tab-b", lambda message: None)  # moved: still one stream
    [streams] = otel.points("agent_sessions.streams.open")
    assert streams.value == 2
    fanout.unwatch("tab-a")
    fanout.unwatch("tab-b")
    fanout.unwatch("tab-b")  # gone already: nothing counted
    [streams] = otel.points("agent_sessions.streams.open")
    assert streams.value == 0


async def test_enabled_false_measures_and_traces_nothing(
    otel: Telemetry, conversation: Conversation, settings: Any
) -> None:
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "TELEMETRY": {"ENABLED": False}}
    await run(conversation, Agent(name="Quiet", model=ScriptedModel([streamed_reply("Hi.")])))
    assert otel.finished() == []
    for name in ("runs.started", "runs.ended", "tokens"):
        assert otel.points(f"agent_sessions.{name}") == []
