"""``AGENT_SESSIONS["RUN_CONTEXT"]``: one setting decides what tools receive, for runs
started over the websocket and over SSE alike; a bad value is a system check's error."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from django_agent_sessions.streaming.checks import check_streaming_settings
from django_agent_sessions.streaming.visiting import context
from django_agent_sessions.streaming.visiting.context import AgentRunContext
from tests import chat_agent
from tests.scripted import streamed_reply, tool_turn
from tests.sse.client import EventStream, post
from tests.websockets import Socket, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

PATH = "tests.streaming.visiting.test_context_setting.tenant_context"
made: list[AgentRunContext] = []


@dataclasses.dataclass
class TenantContext(AgentRunContext):
    tenant: str = ""


def tenant_context(default: AgentRunContext) -> TenantContext:
    """The project's run context: the default's fields, and the tenant. The user the
    scripted agent's tool records says which context the tool got."""
    made.append(default)
    fields = {field.name: getattr(default, field.name) for field in dataclasses.fields(default)}
    fields["user"] = f"tenant-acme:{default.user.username}"
    return TenantContext(**fields, tenant="acme")


@pytest.fixture
def run_context_setting(settings: Any, use_agent: Any) -> None:
    use_agent("tests.chat_agent.make_agent")
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RUN_CONTEXT": PATH}
    made.clear()


def _weather_then(reply: str) -> None:
    chat_agent.script(
        tool_turn("get_weather", {"city": "Paris"}, call_id="c1"), streamed_reply(reply)
    )


@pytest.mark.usefixtures("run_context_setting")
async def test_a_websocket_run_gets_the_projects_context(alice_cookie: bytes, session_id: str):
    _weather_then("Sunny.")
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Weather?")
    assert text_of(await socket.until("run.completed")) == "Sunny."
    assert chat_agent.tool_users == ["tenant-acme:alice"]
    assert [(c.session_id, c.scope["type"]) for c in made] == [(session_id, "websocket")]
    await socket.close()


@pytest.mark.usefixtures("run_context_setting")
async def test_an_sse_run_gets_the_projects_context(alice_cookie: bytes, session_id: str):
    _weather_then("Sunny.")
    stream = EventStream(f"/chat/c/{session_id}/events/", alice_cookie)
    assert await stream.status() == 200
    assert (await stream.frame())["type"] == "history"
    status, _ = await post(f"/chat/c/{session_id}/messages/", {"text": "Weather?"}, alice_cookie)
    assert status == 202
    await stream.frames_until("run.completed")
    await stream.close()
    assert chat_agent.tool_users == ["tenant-acme:alice"]
    assert [(c.session_id, c.scope["type"]) for c in made] == [(session_id, "http")]


def test_without_the_setting_tools_get_the_default(settings: Any) -> None:
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RUN_CONTEXT": None}
    default = AgentRunContext(user="alice", session_id="s", session=None, scope={})
    assert context.run_context(default) is default


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("tests.nowhere.factory", "RUN_CONTEXT"),
        ("tests.streaming.visiting.test_context_setting.PATH", "str"),
    ],
)
def test_a_bad_setting_is_a_check_error_naming_it(settings: Any, value: str, problem: str) -> None:
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RUN_CONTEXT": value}
    errors = [m for m in check_streaming_settings() if m.id == "django_agent_sessions.E021"]
    assert len(errors) == 1
    assert problem in errors[0].msg
    assert errors[0].hint
    with pytest.raises(ImproperlyConfigured, match="RUN_CONTEXT"):
        context.configured_factory()
