"""Writing a title for a conversation from its first exchange: by a model (the run's
agent's, or one the setting names) or by a project's function (``titles.settings``).

The model gets one turn, no tools and no history: the exchange's two texts, cut to
``EXCHANGE_CHARS`` each, and an instruction to answer with a title only. Whatever it
answers is cleaned (its first line, quotes and Markdown marks off, at most
``TITLE_CHARS``); an empty answer writes no title.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from agents import Agent, ModelSettings, RunConfig, Runner
from django.utils.module_loading import import_string

from django_agent_sessions.titles.settings import AGENT, FUNCTION, Titles

#: A written title is at most this long (as the first message's start: AUTOMATIC_TITLE_CHARS).
TITLE_CHARS = 80
#: Each text of the exchange is cut to this many characters before a model reads it.
EXCHANGE_CHARS = 1000
INSTRUCTIONS = (
    "Write a short title, at most six words, for a conversation that starts with the "
    "exchange below, in the language of the exchange. Answer with the title only: no "
    "quotes, no trailing period."
)
_MARKS = "\"'`*#\u201c\u201d\u2018\u2019\u00ab\u00bb_ "


async def write_title(titles: Titles, agent: Agent[Any], message: str, reply: str) -> str:
    """The title for an exchange of ``message`` and ``reply`` ("" for none)."""
    if titles.by == FUNCTION:
        written = import_string(titles.name)(message, reply)
        if inspect.isawaitable(written):
            written = await written
        return clean(written)
    model = agent.model if titles.by == AGENT else titles.name
    settings = agent.model_settings if titles.by == AGENT else ModelSettings()
    writer: Agent[Any] = Agent(
        name="Title writer", instructions=INSTRUCTIONS, model=model, model_settings=settings
    )
    exchange = f"User: {message[:EXCHANGE_CHARS]}\n\nAssistant: {reply[:EXCHANGE_CHARS]}"
    # No tracing of the exchange's text by the SDK: the run of the reply was the event.
    config = RunConfig(tracing_disabled=True, workflow_name="Conversation title")
    result = await Runner.run(writer, exchange, max_turns=1, run_config=config)
    return clean(result.final_output)


def clean(written: Any) -> str:
    """A model's (or function's) answer as a title: its first non-empty line, without
    quotes, Markdown marks or a trailing period, whitespace collapsed, cut to length."""
    if not isinstance(written, str):
        return ""
    lines = [line for line in written.splitlines() if line.strip(_MARKS)]
    title = " ".join(lines[0].split()).strip(_MARKS) if lines else ""
    title = re.sub(r"^(title|titre)\s*:\s*", "", title, flags=re.IGNORECASE).strip(_MARKS)
    title = title.rstrip(".").strip(_MARKS)
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip() + "…"
    return title
