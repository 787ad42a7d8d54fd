"""The streaming benchmark's client of the AI SDK adapter (``protocols/ai_sdk``).

As ``useChat``'s ``DefaultChatTransport`` does: on ``go``, one POST of the chat's
message on a kept-alive connection, whose own response is the run's UI message stream.
Its chunks are counted as the wire's frames are (``client_result.record_frame``): a
``text-delta`` as a ``text.delta``, ``finish`` as the run's end, ``error`` as an error.
The adapter has the floor view's shape (``benchmarks.floor_view``), the reference it is
compared with in paired rounds (``transport_compare``).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from benchmarks.client_result import ClientResult, record_frame
from benchmarks.sse_client import EventStream, post_request

_ENDS = {"stop": "run.completed", "other": "run.cancelled", "error": "run.failed"}


def as_frame(chunk: dict[str, Any]) -> dict[str, Any]:
    """A chunk as the wire frame it stands for (what ``record_frame`` counts)."""
    kind = chunk.get("type")
    if kind == "text-delta":
        return {"type": "text.delta", "delta": chunk["delta"]}
    if kind == "finish":
        return {"type": _ENDS.get(chunk.get("finishReason", "stop"), "run.failed")}
    if kind == "error":
        return {"type": "error", "code": chunk.get("errorText", "")}
    return {"type": str(kind)}


async def chat(
    port: int, cookie: str, text: str, go: asyncio.Event, timeout: float
) -> ClientResult:
    result = ClientResult()
    session_id = f"bench-{uuid.uuid4().hex[:12]}"
    stream = EventStream(port, cookie, session_id)
    message = {"id": "m-1", "role": "user", "parts": [{"type": "text", "text": text}]}
    body = {"id": session_id, "messages": [message], "trigger": "submit-message"}
    try:
        await asyncio.wait_for(stream.connect(), 30)
        await go.wait()
        started = time.time()
        request = post_request("/ai-sdk/chat", cookie, body)
        await asyncio.wait_for(stream.request(request), timeout)
        result.stage = "reading the run"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            chunk = await asyncio.wait_for(stream.frame(), deadline - time.monotonic())
            if record_frame(result, as_frame(chunk), started):
                break
    except (TimeoutError, asyncio.TimeoutError):
        pass  # hung: not completed, no error frame
    except Exception as error:  # a benchmark reports failures instead of dying on them
        result.error = f"{type(error).__name__}: {error}"
    finally:
        await stream.close()
    return result
