"""An AG-UI request through Django's real ASGI handler, read as its events arrive.

Every event the server writes is validated by the ``ag-ui-protocol`` package's own
models (``ag_ui.core.Event``, the union of every event) before a test sees it; the
client can go away mid-response (``http.disconnect``), as ``abortRun()`` does.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from ag_ui.core import Event
from pydantic import TypeAdapter

from tests.sse.client import CSRF_TOKEN, WAIT_SECONDS, Response, _scope, application

URL = "/ag-ui/"
EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


def run_input(thread_id: str, text: str | None = None, **fields: Any) -> dict[str, Any]:
    """A ``RunAgentInput`` as a client writes it; ``text``: a new user message."""
    messages = [{"id": f"m-{uuid.uuid4().hex[:8]}", "role": "user", "content": text}]
    return {
        "threadId": thread_id,
        "runId": f"r-{uuid.uuid4().hex[:8]}",
        "messages": messages if text is not None else [],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
        **fields,
    }


class AgUiRequest:
    """``POST /ag-ui/`` held open; ``event()`` reads one event at a time."""

    opened: list[AgUiRequest] = []  # closed after each test (see conftest)

    def __init__(self, body: Any, cookie: bytes | None, *, csrf: bool = True) -> None:
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = [(b"content-type", b"application/json"), (b"accept", b"text/event-stream")]
        if csrf:
            headers.append((b"x-csrftoken", CSRF_TOKEN.encode()))
        self.response = Response()
        self._gone = asyncio.Event()
        self._asked = False
        self._buffer = ""
        self.comments: list[str] = []
        scope = _scope("POST", URL, cookie, headers)
        self.task = asyncio.create_task(application(scope, self._receive, self.response.send))
        AgUiRequest.opened.append(self)

    async def _receive(self) -> dict[str, Any]:
        if not self._asked:
            self._asked = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def status(self) -> int:
        await asyncio.wait_for(self.response.started.wait(), WAIT_SECONDS)
        return self.response.status

    async def text(self) -> str:
        """The whole body (a refused request's JSON)."""
        body = b""
        while (
            chunk := await asyncio.wait_for(self.response.chunks.get(), WAIT_SECONDS)
        ) is not None:
            body += chunk
        return body.decode()

    async def event(self, timeout: float = WAIT_SECONDS) -> dict[str, Any] | None:
        """The next event, validated, as the JSON the server wrote; None at the end."""
        while "\n\n" not in self._buffer:
            chunk = await asyncio.wait_for(self.response.chunks.get(), timeout)
            if chunk is None:
                assert self._buffer.strip() == "", self._buffer
                return None
            self._buffer += chunk.decode()
        block, self._buffer = self._buffer.split("\n\n", 1)
        if block.startswith(":"):
            self.comments.append(block)
            return await self.event(timeout)
        assert block.startswith("data: "), block
        assert "\n" not in block, block  # one line of JSON per event
        data = json.loads(block.removeprefix("data: "))
        EVENTS.validate_python(data)  # raises on anything the protocol does not allow
        return dict(data)

    async def events(self) -> list[dict[str, Any]]:
        """Every event up to the end of the response."""
        found = []
        while (event := await self.event()) is not None:
            found.append(event)
        return found

    async def events_until(self, *types: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        while True:
            event = await self.event()
            assert event is not None, f"the response ended before {types}: {found}"
            found.append(event)
            if event["type"] in types:
                return found

    async def close(self) -> None:
        """The client goes away (AG-UI's ``abortRun()``), and the handler finishes."""
        self._gone.set()
        try:
            await asyncio.wait_for(self.task, WAIT_SECONDS)
        finally:
            if self in AgUiRequest.opened:
                AgUiRequest.opened.remove(self)


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
