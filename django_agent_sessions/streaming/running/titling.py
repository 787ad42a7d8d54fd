"""A conversation's title, written after its first exchange (``AGENT_SESSIONS["TITLES"]``).

Never on the reply's path: a run that completed asks for a title only after its end was
recorded and told (``traced``), and the title is written by a task of its own, so the
reply's tokens, its end and the next message never wait for it. The task

1. reads from the run's end record whether the conversation still wants one
   (``store.titles.with_title_wish``: the title is still the first message's, and this
   was its first completed run), no query of its own;
2. has the title written (``titles.writing``: a model, or the project's function);
3. waits for a quiet turn (``arrivals``): until no message that reached this process
   waits for its reply's first token, one title at a time, at most
   ``AGENT_SESSIONS["TITLE_WAIT_SECONDS"]``: people who answer at once would otherwise
   wait for the titles' writes and broadcasts before their replies' first tokens
   (measured: the titles benchmark, ``benchmarks/README.md``);
4. writes it with compare-and-set: only while the title is still the first message's,
   so a rename by the person, before or while the title was written, always wins;
5. tells every tab of the conversation: ``{"type": "conversation.title", "title"}``.

A failure (the model, the function, the database) is logged and leaves the title as it
was: a title is a nicety, never a reason for an error the person sees.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from typing import Any

from agents import Agent

from django_agent_sessions.conf import app_settings
from django_agent_sessions.models import AgentRun
from django_agent_sessions.store import titles as stored_titles
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.delivery.groups import group_name
from django_agent_sessions.streaming.running import arrivals
from django_agent_sessions.titles import settings as title_settings
from django_agent_sessions.titles.writing import write_title

logger = logging.getLogger(__name__)

#: The title tasks in progress (kept so that none is garbage-collected mid-way).
writing: set[asyncio.Task[None]] = set()


def after_run(
    recorded: AgentRun | None,
    terminal: dict[str, Any] | None,
    *,
    agent: Agent[Any],
    text: str,
    conversation_pk: int,
    channel_layer: Any,
) -> None:
    """Start titling the conversation if titles are on and the run's end record says it
    wants one (``title_from``: a completed first exchange, still titled by its first
    message); returns at once (see the module)."""
    titles = title_settings.configured()
    first = getattr(recorded, "title_from", None)
    if titles is None or first is None or terminal is None:
        return
    output = terminal.get("final_output")
    reply = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    title = _title(titles, agent, text or first, reply, conversation_pk, channel_layer)
    # A context of its own: the task outlives the run, whose span (telemetry) has ended.
    task = contextvars.Context().run(asyncio.get_running_loop().create_task, title)
    writing.add(task)
    task.add_done_callback(writing.discard)


async def _title(
    titles: title_settings.Titles,
    agent: Agent[Any],
    text: str,
    reply: str,
    conversation_pk: int,
    channel_layer: Any,
) -> None:
    try:
        title = await write_title(titles, agent, text, reply)
        if not title:
            return
        async with arrivals.quiet_turn(float(app_settings.TITLE_WAIT_SECONDS)):
            if not await stored_titles.write(conversation_pk, title):
                return  # the person renamed it meanwhile: theirs stays
            event = {"type": "conversation.title", "title": title}
            group = group_name(conversation_pk)
            await fanout.broadcast(channel_layer, group, conversation_pk, event)
    except Exception:
        logger.exception("Could not write a title for conversation %s.", conversation_pk)
