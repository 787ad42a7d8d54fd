"""A worker process for the compaction tests: ``python -m tests.compaction_worker ROLE ...``.

Started by ``tests/test_session_compaction.py`` against the test run's database.

Each process prints ``ready`` once Django and the SDK are imported, waits for a line on
stdin (so that all start together, whatever their import time), works for SECONDS,
then prints its result as one JSON line.

- ``append SESSION_ID SECONDS NAME``: appends user messages ``NAME-<i>``, one per
  ``add_items``, with short random pauses; prints ``[[text, time], ...]``.
- ``compact SESSION_ID SECONDS HOOK``: runs the agent again and again through
  ``OpenAIResponsesCompactionSession(DjangoSession(...))`` with automatic compaction
  after every turn. The compaction "API" takes a while (the window in which other
  processes append) and returns one compaction item that records which messages it
  summarised. HOOK ``off`` hides DjangoSession's snapshot hook, so the SDK takes its
  generic path (``clear_session()`` then ``add_items()``): the control. Prints
  ``{"requests": n, "first": t0, "last": t1}`` (request count and time span).
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from types import SimpleNamespace
from typing import Any

import django

django.setup()

from agents import Agent, Runner  # noqa: E402
from agents.memory import OpenAIResponsesCompactionSession  # noqa: E402
from agents.testing import ScriptedModel, assistant_message  # noqa: E402

from django_agent_sessions import DjangoSession  # noqa: E402

API_SECONDS = 0.1


def summarised(items: list[Any]) -> list[str]:
    """The user messages a compaction covers, including those of earlier compactions."""
    covered: list[str] = []
    for item in items:
        if item.get("type") == "compaction":
            covered += json.loads(item["encrypted_content"])
        elif item.get("role") == "user" and isinstance(item.get("content"), str):
            covered.append(item["content"])
    return covered


class Client:
    """Stands in for ``AsyncOpenAI``: only ``responses.compact`` is used."""

    def __init__(self) -> None:
        self.requests = 0
        self.first = self.last = 0.0
        self.responses = SimpleNamespace(compact=self.compact)

    async def compact(self, *, model: str, input: list[Any]) -> Any:
        self.requests += 1
        self.first = self.first or time.time()
        await asyncio.sleep(API_SECONDS)
        self.last = time.time()
        item = {
            "type": "compaction",
            "id": f"cmp-{self.requests}",
            "encrypted_content": json.dumps(summarised(input)),
        }
        return SimpleNamespace(output=[item], usage=None)


class WithoutHook(DjangoSession):
    """DjangoSession as a store without the snapshot hook (the SDK's generic path)."""

    async def _get_compaction_snapshot(self, limit: int, **kwargs: Any) -> Any:
        return None


async def append(session_id: str, end: float, name: str) -> list[Any]:
    session = DjangoSession(session_id)
    written: list[Any] = []
    while time.time() < end:
        text = f"{name}-{len(written)}"
        await session.add_items([{"role": "user", "content": text}])
        written.append([text, time.time()])
        await asyncio.sleep(random.uniform(0.05, 0.5))
    return written


async def warm_up(session_id: str) -> None:
    """One compacted run on a scratch conversation: the SDK imports much on first use."""
    await compact(f"{session_id}-warm-up", time.time() + 0.001, "on")
    await DjangoSession(f"{session_id}-warm-up").clear_session()


async def compact(session_id: str, end: float, hook: str) -> dict[str, Any]:
    store = DjangoSession(session_id) if hook == "on" else WithoutHook(session_id)
    client = Client()
    session = OpenAIResponsesCompactionSession(
        session_id,
        store,
        client=client,  # type: ignore[arg-type]
        compaction_mode="input",
        should_trigger_compaction=lambda context: True,
    )
    agent = Agent(
        name="compacting",
        model=ScriptedModel([[assistant_message(f"reply {i}")] for i in range(300)]),
    )
    runs = 0
    while runs == 0 or time.time() < end:
        await Runner.run(agent, f"run-{runs}", session=session)
        runs += 1
    return {"requests": client.requests, "first": client.first, "last": client.last}


if __name__ == "__main__":
    from agents import set_tracing_disabled

    set_tracing_disabled(True)
    role, session_id, seconds, last = sys.argv[1:]
    if role == "compact":
        asyncio.run(warm_up(session_id))
    print("ready", flush=True)
    sys.stdin.readline()
    end = time.time() + float(seconds)
    if role == "append":
        result: Any = asyncio.run(append(session_id, end, last))
    else:
        result = asyncio.run(compact(session_id, end, last))
    print(json.dumps(result), flush=True)
