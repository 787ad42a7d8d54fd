"""An HTTP client of the SSE transport that speaks ASGI to Django's own handler.

Through the real middleware stack (sessions, CSRF, authentication) and Django's real
``ASGIHandler``, with the two things a test needs that Django's test client hides: the
stream's events one at a time as the server writes them, and a client that goes away
(``http.disconnect``) while the response is still being written.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.core.asgi import get_asgi_application

application = get_asgi_application()

CSRF_TOKEN = "a" * 32
WAIT_SECONDS = 10.0


def _scope(method: str, url: str, cookie: bytes | None, headers: list[tuple[bytes, bytes]]) -> Any:
    parts = urlsplit(url)
    cookies = b"csrftoken=" + CSRF_TOKEN.encode() + (b"; " + cookie if cookie else b"")
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": parts.path,
        "raw_path": parts.path.encode(),
        "query_string": parts.query.encode(),
        "headers": [(b"host", b"testserver"), (b"cookie", cookies), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }


class Response:
    """A response as it arrives: status, headers, then body chunks."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.started = asyncio.Event()
        self.chunks: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def send(self, message: Mapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = {k.decode().lower(): v.decode() for k, v in message["headers"]}
            self.started.set()
        elif message["type"] == "http.response.body":
            self.chunks.put_nowait(message.get("body", b""))
            if not message.get("more_body"):
                self.chunks.put_nowait(None)


async def post(url: str, body: Any, cookie: bytes | None, *, csrf: bool = True) -> tuple[int, Any]:
    """POST ``body`` as JSON (bytes as they are); the status and the decoded JSON."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = [(b"content-type", b"application/json")]
    if csrf:
        headers.append((b"x-csrftoken", CSRF_TOKEN.encode()))
    response = Response()
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": data, "more_body": False}
        await asyncio.Event().wait()  # the client stays until the response is over
        raise AssertionError("unreachable")

    await asyncio.wait_for(
        application(_scope("POST", url, cookie, headers), receive, response.send), WAIT_SECONDS
    )
    text = b""
    while (chunk := response.chunks.get_nowait()) is not None:
        text += chunk
    if not response.headers.get("content-type", "").startswith("application/json"):
        return response.status, text.decode()
    return response.status, json.loads(text)


class EventStream:
    """``GET .../events/`` held open; ``next()`` reads one event at a time."""

    opened: list[EventStream] = []  # closed after each test (see conftest)

    def __init__(
        self, url: str, cookie: bytes | None, last_event_id: str = "", accept_gzip: bool = False
    ) -> None:
        headers = [(b"accept", b"text/event-stream")]
        if accept_gzip:
            headers.append((b"accept-encoding", b"gzip"))
        if last_event_id:
            headers.append((b"last-event-id", last_event_id.encode()))
        self.response = Response()
        self._gone = asyncio.Event()
        self._buffer = ""
        self.comments: list[str] = []
        self.last_id = ""
        scope = _scope("GET", url, cookie, headers)
        self.task = asyncio.create_task(application(scope, self._receive, self.response.send))
        EventStream.opened.append(self)

    async def _receive(self) -> dict[str, Any]:
        if not hasattr(self, "_asked"):
            self._asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def status(self) -> int:
        await asyncio.wait_for(self.response.started.wait(), WAIT_SECONDS)
        return self.response.status

    async def next(self, timeout: float = WAIT_SECONDS) -> dict[str, Any] | None:
        """The next event as ``{"id", "event", "data"}``; None when the stream ended."""
        while "\n\n" not in self._buffer:
            chunk = await asyncio.wait_for(self.response.chunks.get(), timeout)
            if chunk is None:
                return None
            self._buffer += chunk.decode()
        block, self._buffer = self._buffer.split("\n\n", 1)
        event: dict[str, Any] = {"id": None, "event": None, "data": None}
        for line in block.split("\n"):
            field, _, value = line.partition(": ")
            if field == "":
                self.comments.append(value)
            elif field == "data":
                event["data"] = json.loads(value)
            else:
                event[field] = value
        if event["id"] is not None:
            self.last_id = event["id"]
        if event["event"] is None:
            return await self.next(timeout)  # a comment or the retry field: not an event
        return event

    async def frame(self, timeout: float = WAIT_SECONDS) -> dict[str, Any]:
        event = await self.next(timeout)
        assert event is not None, "the stream ended"
        assert event["event"] == event["data"]["type"]
        return dict(event["data"])

    async def frames_until(self, *types: str) -> list[dict[str, Any]]:
        """Frames up to and including the first of one of ``types``."""
        frames = []
        while True:
            frame = await self.frame()
            frames.append(frame)
            if frame["type"] in types:
                return frames

    async def close(self) -> None:
        self._gone.set()
        try:
            await asyncio.wait_for(self.task, WAIT_SECONDS)
        finally:
            if self in EventStream.opened:
                EventStream.opened.remove(self)
