"""``titles.writing``: a title from the agent's model (one turn, no tools, the exchange
cut to length), from a named model's agent settings, or from a function, cleaned."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, function_tool
from agents.testing import ModelStep, ScriptedModel, assistant_message

from django_agent_sessions.titles.settings import Titles
from django_agent_sessions.titles.writing import EXCHANGE_CHARS, TITLE_CHARS, clean, write_title
from tests import title_functions


@function_tool
def never(city: str) -> str:
    """Not for titles."""
    raise AssertionError("a title writer called a tool")


async def test_the_agents_model_writes_it_in_one_turn_without_tools() -> None:
    model = ScriptedModel([ModelStep(output=[assistant_message("**Trip to Lisbon**")])])
    agent = Agent(name="Travel", model=model, tools=[never], instructions="Be a travel agent.")
    title = await write_title(Titles("agent"), agent, "x" * 5000, "Sure.")
    assert title == "Trip to Lisbon"
    [call] = model.calls
    assert not call.tools
    assert "travel agent" not in str(call.system_instructions)
    assert "x" * EXCHANGE_CHARS in str(call.input)
    assert "x" * (EXCHANGE_CHARS + 1) not in str(call.input)


async def test_a_function_may_be_sync_or_async() -> None:
    title_functions.reset()
    agent = Agent(name="Unused")
    gated = Titles("FUNCTION", "tests.title_functions.gated")
    assert await write_title(gated, agent, "Rome", "Yes.") == "About Rome"
    assert title_functions.calls == [("Rome", "Yes.")]
    failing = Titles("FUNCTION", "tests.title_functions.failing")
    with pytest.raises(RuntimeError):
        await write_title(failing, agent, "Rome", "Yes.")


@pytest.mark.parametrize(
    ("written", "title"),
    [
        ('"Weekend plans."', "Weekend plans"),
        ("Title: Budget review\nsecond line", "Budget review"),
        ("\n\n  # Heading  \n", "Heading"),
        ("«Un titre»", "Un titre"),
        ("", ""),
        ('""', ""),
        (None, ""),
        (42, ""),
    ],
)
def test_an_answer_is_cleaned(written: Any, title: str) -> None:
    assert clean(written) == title


def test_a_long_answer_is_cut() -> None:
    title = clean("word " * 100)
    assert len(title) == TITLE_CHARS
    assert title.endswith("…")
