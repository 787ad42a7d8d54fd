"""Helpers for the tests of queued messages (``WHILE_RUNNING = "queue"``): what a
conversation's sockets are told, the first message with its reply paused, and what the
conversation holds after."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.streaming.visiting import actions
from django_agent_sessions.streaming.visiting.visitor import Visitor
from tests import chat_agent
from tests.scripted import streamed_reply

Open = Callable[..., Visitor]
TERMINAL = {"run.completed", "run.cancelled", "run.failed"}


class Events:
    """What the conversation's sockets are told, from now on."""

    def __init__(self, conversation_pk: int) -> None:
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.watcher = f"test-queueing.{uuid.uuid4().hex}"
        fanout.watch(conversation_pk, self.watcher, lambda m: self.queue.put_nowait(m["event"]))

    async def until(self, kind: str, count: int = 1) -> list[dict[str, Any]]:
        """Every event until the ``count``-th of type ``kind`` (ends: any end)."""
        seen: list[dict[str, Any]] = []
        kinds = TERMINAL if kind == "end" else {kind}
        while sum(event["type"] in kinds for event in seen) < count:
            seen.append(await asyncio.wait_for(self.queue.get(), 10))
        return seen

    def close(self) -> None:
        fanout.unwatch(self.watcher)


def message(text: str, client_id: str) -> dict[str, Any]:
    return {"type": "user_message", "text": text, "client_id": client_id}


async def started_with_a_reply(tab: Visitor, gate: asyncio.Event) -> Events:
    """The first message sent, its reply paused after its first token."""
    chat_agent.script(
        streamed_reply("A long answer.", gate=gate),
        streamed_reply("Second."),
        streamed_reply("Third."),
    )
    await actions.send_from_chat(tab, message("One", "c-1"))
    assert tab.conversation_pk is not None
    return Events(tab.conversation_pk)


async def answered(tab: Visitor) -> int:
    """The first message sent and its reply ended (scripted before); the conversation."""
    await actions.send_from_chat(tab, message("One", "c-1"))
    assert tab.conversation_pk is not None
    active = active_runs.local_run(tab.conversation_pk)
    assert active is not None
    assert active.task is not None
    await asyncio.wait_for(active.task, 10)
    return tab.conversation_pk


async def said(alice: Any, tab: Visitor) -> list[str]:
    items: list[Any] = await DjangoSession(tab.session_id, owner=alice).get_items()
    return [item["content"] for item in items if item.get("role") == "user"]


async def runs_of(tab: Visitor) -> list[tuple[str, str]]:
    found = AgentRun.objects.filter(session_id=tab.conversation_pk).order_by("pk")
    return [row async for row in found.values_list("status", "client_id")]
