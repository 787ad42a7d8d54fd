"""The streaming benchmark's clients of the protocol adapters: the AI SDK's
(``protocols/ai_sdk``) and AG-UI's (``protocols/ag_ui``).

As their clients do (``useChat``'s ``DefaultChatTransport``, ``@ag-ui/client``'s
``HttpAgent``): on ``go``, one POST of the chat's message on a kept-alive connection,
whose own response is the run's stream. Its chunks are counted as the wire's frames are
(``client_result.record_frame``): a text delta as a ``text.delta``, the run's end as the
run's end, an error as an error. Both adapters have the floor view's shape
(``benchmarks.floor_view``), the reference they are compared with in paired rounds
(``transport_compare``).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.client_result import ClientResult, record_frame
from benchmarks.sse_client import EventStream, post_request

_AI_SDK_ENDS = {"stop": "run.completed", "other": "run.cancelled", "error": "run.failed"}


def ai_sdk_frame(chunk: dict[str, Any]) -> dict[str, Any]:
    """A UI message stream chunk as the wire frame it stands for."""
    kind = chunk.get("type")
    if kind == "text-delta":
        return {"type": "text.delta", "delta": chunk["delta"]}
    if kind == "finish":
        return {"type": _AI_SDK_ENDS.get(chunk.get("finishReason", "stop"), "run.failed")}
    if kind == "error":
        return {"type": "error", "code": chunk.get("errorText", "")}
    return {"type": str(kind)}


def ag_ui_frame(event: dict[str, Any]) -> dict[str, Any]:
    """An AG-UI event as the wire frame it stands for."""
    kind = event.get("type")
    if kind == "TEXT_MESSAGE_CONTENT":
        return {"type": "text.delta", "delta": event["delta"]}
    if kind == "RUN_FINISHED":
        return {"type": "run.completed"}
    if kind == "RUN_ERROR":
        return {"type": "error", "code": event.get("code") or ""}
    return {"type": str(kind)}


@dataclass(frozen=True)
class Adapter:
    """How one protocol's client asks for a run and reads it."""

    path: str
    body: Callable[[str, str], dict[str, Any]]  # (conversation id, text) -> request body
    frame: Callable[[dict[str, Any]], dict[str, Any]]


def _ai_sdk_body(session_id: str, text: str) -> dict[str, Any]:
    message = {"id": "m-1", "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": session_id, "messages": [message], "trigger": "submit-message"}


def _ag_ui_body(session_id: str, text: str) -> dict[str, Any]:
    return {
        "threadId": session_id,
        "runId": f"r-{uuid.uuid4().hex[:8]}",
        "messages": [{"id": "m-1", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }


AI_SDK = Adapter("/ai-sdk/chat", _ai_sdk_body, ai_sdk_frame)
AG_UI = Adapter("/ag-ui/", _ag_ui_body, ag_ui_frame)


async def chat(
    adapter: Adapter, port: int, cookie: str, text: str, go: asyncio.Event, timeout: float
) -> ClientResult:
    result = ClientResult()
    session_id = f"bench-{uuid.uuid4().hex[:12]}"
    stream = EventStream(port, cookie, session_id)
    try:
        await asyncio.wait_for(stream.connect(), 30)
        await go.wait()
        started = time.time()
        request = post_request(adapter.path, cookie, adapter.body(session_id, text))
        await asyncio.wait_for(stream.request(request), timeout)
        result.stage = "reading the run"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            chunk = await asyncio.wait_for(stream.frame(), deadline - time.monotonic())
            if record_frame(result, adapter.frame(chunk), started):
                break
    except (TimeoutError, asyncio.TimeoutError):
        pass  # hung: not completed, no error frame
    except Exception as error:  # a benchmark reports failures instead of dying on them
        result.error = f"{type(error).__name__}: {error}"
    finally:
        await stream.close()
    return result
