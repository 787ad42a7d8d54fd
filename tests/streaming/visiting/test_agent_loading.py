"""AGENT_SESSIONS["AGENT"]: an Agent, a factory (with or without the scope), async or not."""

from __future__ import annotations

import pytest
from agents import Agent
from django.core.exceptions import ImproperlyConfigured

from django_agent_sessions.streaming.visiting.agent_loading import load_agent

SCOPE = {"type": "websocket", "user": "someone"}
plain_agent = Agent(name="Plain")


def no_argument_factory() -> Agent:
    return Agent(name="Made")


def scope_factory(scope) -> Agent:
    return Agent(name=f"For {scope['user']}")


async def async_factory(scope) -> Agent:
    return Agent(name="Async")


def wrong_factory():
    return "not an agent"


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("tests.streaming.visiting.test_agent_loading.plain_agent", "Plain"),
        ("tests.streaming.visiting.test_agent_loading.no_argument_factory", "Made"),
        ("tests.streaming.visiting.test_agent_loading.scope_factory", "For someone"),
        ("tests.streaming.visiting.test_agent_loading.async_factory", "Async"),
    ],
)
async def test_agent_forms(settings, path, name):
    settings.AGENT_SESSIONS = {"AGENT": path}
    assert (await load_agent(SCOPE)).name == name


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (None, "is not set"),
        ("tests.streaming.visiting.test_agent_loading.missing", "missing"),
        ("tests.streaming.visiting.test_agent_loading.SCOPE", "not an Agent or a callable"),
        ("tests.streaming.visiting.test_agent_loading.wrong_factory", "returned a str"),
    ],
)
async def test_bad_agent_settings_say_what_is_wrong(settings, value, words):
    settings.AGENT_SESSIONS = {"AGENT": value}
    with pytest.raises(ImproperlyConfigured, match=words):
        await load_agent(SCOPE)
