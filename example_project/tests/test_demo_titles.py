"""The offline demo's titles: telling words of the first message, on by default without
an API key (``DEMO_TITLES``), the agent's model with one, none when switched off."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from example_project import demo_titles
from example_project import settings as example_settings


def test_a_title_is_the_first_messages_telling_words() -> None:
    assert demo_titles.title("what's the weather in Paris tomorrow?", "") == (
        "Weather Paris tomorrow"
    )
    assert demo_titles.title("hi", "Hello! Ask me about the weather.") == "Ask about weather"
    assert demo_titles.title("?", "") == ""


@pytest.mark.parametrize(
    ("environment", "titles"),
    [
        ({}, {"FUNCTION": "example_project.demo_titles.title"}),
        ({"DEMO_TITLES": "0"}, None),
        ({"OPENAI_API_KEY": "sk-test"}, "agent"),
    ],
)
def test_the_setting_follows_the_environment(
    monkeypatch: Any, environment: dict[str, str], titles: Any
) -> None:
    for name in ("DEMO_TITLES", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    try:
        assert importlib.reload(example_settings).AGENT_SESSIONS["TITLES"] == titles
    finally:
        monkeypatch.undo()
        importlib.reload(example_settings)
