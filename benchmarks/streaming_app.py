"""The server side of the streaming benchmark: a paced model, and a session-less baseline.

The model reads its pace from the user's message (``tokens=200 delay_ms=20 pad=0``), so one
daphne worker serves every scenario. Each token carries the wall-clock time it was
generated (``@<time.time()>``), so the load client on the same machine can measure each
token's delivery latency through the whole stack: Runner, coalescing, channel layer,
consumer, daphne, TCP.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agents import Agent, Model, ModelResponse, set_tracing_disabled
from agents.items import TResponseStreamEvent
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)

from example_project import demo_responses

_PARAM = re.compile(r"(tokens|delay_ms|pad)=(\d+)")


def pace_of(text: str) -> tuple[int, float, int]:
    """``tokens``, seconds between tokens, and padding bytes per token, from the message."""
    found = {key: int(value) for key, value in _PARAM.findall(text)}
    tokens = min(found.get("tokens", 20), 100_000)
    return tokens, min(found.get("delay_ms", 0), 1000) / 1000, min(found.get("pad", 0), 10_000)


class PacedModel(Model):
    """Streams ``tokens`` timestamped tokens, ``delay`` seconds apart (see module doc)."""

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise NotImplementedError("the streaming benchmark only streams")

    async def stream_response(  # type: ignore[override]
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> AsyncIterator[TResponseStreamEvent]:
        items = [input] if isinstance(input, str) else list(input)
        last = items[-1]
        text = last if isinstance(last, str) else str(_content(last))
        tokens, delay, pad = pace_of(text)
        history = [i for i in items if isinstance(i, Mapping)]
        seq = iter(range(10**9))

        def event(cls: type[Any], **fields: Any) -> Any:
            return cls.model_validate({**fields, "sequence_number": next(seq)})

        message_id = f"msg_bench_{len(history)}"
        ids = {"item_id": message_id, "output_index": 0, "content_index": 0}
        empty = _message(message_id, "", "in_progress")
        yield event(
            ResponseCreatedEvent,
            type="response.created",
            response=demo_responses.response(history, [], None),
        )
        yield event(
            ResponseOutputItemAddedEvent,
            type="response.output_item.added",
            output_index=0,
            item=empty,
        )
        yield event(
            ResponseContentPartAddedEvent,
            type="response.content_part.added",
            part=ResponseOutputText(type="output_text", text="", annotations=[]),
            **ids,
        )
        parts = []
        filler = "x" * pad
        for _ in range(tokens):
            await asyncio.sleep(delay)
            token = f"@{time.time():.6f}{filler} "
            parts.append(token)
            yield event(
                ResponseTextDeltaEvent,
                type="response.output_text.delta",
                delta=token,
                logprobs=[],
                **ids,
            )
        full = "".join(parts)
        done = _message(message_id, full, "completed")
        yield event(
            ResponseTextDoneEvent, type="response.output_text.done", text=full, logprobs=[], **ids
        )
        yield event(
            ResponseContentPartDoneEvent,
            type="response.content_part.done",
            part=done.content[0],
            **ids,
        )
        yield event(
            ResponseOutputItemDoneEvent, type="response.output_item.done", output_index=0, item=done
        )
        output: list[Any] = [done]
        yield event(
            ResponseCompletedEvent,
            type="response.completed",
            response=demo_responses.response(
                history, output, demo_responses.usage(history, output)
            ),
        )


def _content(item: Any) -> Any:
    return item.get("content", "") if isinstance(item, Mapping) else ""


def _message(message_id: str, text: str, status: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=message_id,
        type="message",
        role="assistant",
        status=status,  # type: ignore[arg-type]
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


def build_agent(scope: Any = None) -> Agent[Any]:
    set_tracing_disabled(True)
    return Agent(name="Benchmark assistant", instructions="", model=PacedModel())


async def write_title(message: str, reply: str) -> str:
    """The titles benchmark's title writer (``benchmarks.titles_switch``): waits as long as a small
    model's answer takes (``BENCH_TITLE_MS``, 400 by default), reads the exchange as a
    model's client would encode it, and answers a title."""
    await asyncio.sleep(int(os.environ.get("BENCH_TITLE_MS", "400")) / 1000)
    words = f"{message} {reply}".split()
    return f"Benchmark chat of {len(words)} words"


class NoMemorySession:
    """The baseline's stand-in for ``DjangoSession``: remembers nothing, touches no database."""

    session_settings = None

    def __init__(self, session_id: str, **_: Any) -> None:
        self.session_id = session_id

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return []

    async def add_items(self, items: list[Any]) -> None:
        return None

    async def pop_item(self) -> Any:
        return None

    async def clear_session(self) -> None:
        return None


def prepare(users: int) -> list[str]:
    """Migrate, create ``users`` benchmark users and return a signed-in session key each."""
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    keys = []
    for index in range(users):
        user, _ = get_user_model().objects.get_or_create(username=f"bench{index}")
        store = SessionStore()
        store["_auth_user_id"] = str(user.pk)
        store["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
        store["_auth_user_hash"] = user.get_session_auth_hash()
        store.create()
        keys.append(store.session_key or "")
    return keys


if __name__ == "__main__":
    import json
    import sys

    import django

    django.setup()
    print(json.dumps(prepare(int(sys.argv[1]))))
