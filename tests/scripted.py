"""Scripted models that stream token by token, for driving the real ``Runner``.

The SDK's ``ScriptedModel`` streams a whole text part as one delta. Chat tests need the
shape of a real model stream: many small deltas, spaced in time, so that coalescing,
cancellation and mid-run catch-up have something to act on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agents.items import TResponseOutputItem, TResponseStreamEvent
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.testing.model import _stream_events_for_step
from agents.usage import Usage

__all__ = ["ScriptedModel", "assistant_message", "function_call", "streamed_reply", "tokens"]


def tokens(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def streamed_reply(
    text: str,
    *,
    delay: float = 0.0,
    token_size: int = 3,
    tool_calls: Sequence[TResponseOutputItem] = (),
    usage: Usage | None = None,
    gate: asyncio.Event | None = None,
    progress: list[str] | None = None,
    pace: asyncio.Semaphore | None = None,
) -> ModelStep:
    """A model turn that streams ``text`` in ``token_size`` pieces, ``delay`` apart.

    ``gate``: when given, streaming pauses after the first token until it is set, so a
    test can act "mid-run" deterministically. ``progress``: every token the model has
    produced is appended to it, so a test can see when the model stopped. ``pace``: each
    token waits for it (released once per token), so a test says when the run goes on.
    """
    output: list[TResponseOutputItem] = []
    if text:
        output.append(assistant_message(text, item_id=f"msg-{abs(hash(text)) % 10**8}"))
    output.extend(tool_calls)
    usage = usage or Usage(requests=1, input_tokens=11, output_tokens=7, total_tokens=18)
    step = ModelStep(output=output, usage=usage)
    events = _stream_events_for_step(step, preserve_raw_usage=False)

    async def stream(call: Any) -> AsyncIterator[TResponseStreamEvent]:
        first = True
        for event in events:
            if event.type != "response.output_text.delta":
                yield event
                continue
            for piece in tokens(event.delta, token_size):
                if pace is not None:
                    await pace.acquire()
                if progress is not None:
                    progress.append(piece)
                yield event.model_copy(update={"delta": piece})
                if first and gate is not None:
                    await gate.wait()
                first = False
                if delay:
                    await asyncio.sleep(delay)

    return ModelStep.stream(stream, output=output, usage=usage)


def tool_turn(name: str, arguments: dict[str, Any], *, call_id: str) -> ModelStep:
    return streamed_reply("", tool_calls=[function_call(name, arguments, call_id=call_id)])
