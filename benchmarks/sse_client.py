"""The streaming benchmark's SSE clients: ``GET .../events/`` held open, POSTs to start runs.

A minimal HTTP/1.1 client on asyncio streams (the server's response is chunked), so the
measurement is the server's and not a client library's. Used by ``load_client`` when a
mode runs the SSE transport; every wait here is bounded.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

from benchmarks.client_result import ClientResult, record_frame

CSRF = "c" * 32


class EventStream:
    """One stream: ``open()`` reads the headers, ``frame()`` the next event's JSON."""

    def __init__(self, port: int, cookie: str, session_id: str) -> None:
        self.port, self.cookie, self.session_id = port, cookie, session_id
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self._text = ""

    async def open(self) -> None:
        await self.connect()
        await self.request(
            f"GET /c/{self.session_id}/events/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Cookie: sessionid={self.cookie}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def request(self, request: bytes) -> None:
        """Send ``request``; read its response's head, which must say 200."""
        assert self.reader is not None
        assert self.writer is not None
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(head.split(b"\r\n", 1)[0].decode())

    async def frame(self) -> dict[str, Any]:
        while True:
            if "\n\n" in self._text:
                block, self._text = self._text.split("\n\n", 1)
                for line in block.split("\n"):
                    if line.startswith("data: "):
                        return dict(json.loads(line[6:]))
                continue  # a heartbeat or the reconnect delay
            self._text += await self._chunk()

    async def _chunk(self) -> str:
        assert self.reader is not None
        size = int((await self.reader.readline()).strip() or b"0", 16)
        if size == 0:
            raise ConnectionError("the stream ended")
        data = await self.reader.readexactly(size + 2)
        return data[:-2].decode()

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def post_request(path: str, cookie: str, content: dict[str, Any]) -> bytes:
    """A signed-in browser's ``fetch`` POST of ``content`` as JSON, CSRF token included."""
    body = json.dumps(content).encode()
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Cookie: sessionid={cookie}; csrftoken={CSRF}\r\nX-CSRFToken: {CSRF}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


class Poster:
    """One kept-alive connection for a client's POSTs, as a browser's ``fetch`` keeps one."""

    def __init__(self, port: int, cookie: str) -> None:
        self.port, self.cookie = port, cookie
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def message(self, session_id: str, text: str) -> int:
        """POST a ``user_message``; the response's status."""
        return await self.post(f"/c/{session_id}/messages/", {"text": text})

    async def post(self, path: str, content: dict[str, Any]) -> int:
        """POST ``content`` as JSON to ``path``; the response's status."""
        assert self.reader is not None
        assert self.writer is not None
        self.writer.write(post_request(path, self.cookie, content))
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode().lower()
        length = int(head.split("content-length:", 1)[1].split("\r\n", 1)[0])
        await self.reader.readexactly(length)
        return int(head.split()[1])

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def chat(
    port: int, cookie: str, text: str, go: asyncio.Event, timeout: float
) -> ClientResult:
    """As ``load_client.chat``, over SSE: the stream's history, then a POST on ``go``."""
    result = ClientResult()
    stream = EventStream(port, cookie, f"bench-{uuid.uuid4().hex[:12]}")
    poster = Poster(port, cookie)
    posted: asyncio.Future[int] | None = None
    try:
        await asyncio.wait_for(stream.open(), 30)
        await asyncio.wait_for(poster.open(), 30)
        result.stage = "waiting for the history frame"
        first = await asyncio.wait_for(stream.frame(), 30)
        if first.get("type") != "history":
            result.error = f"first frame was {first.get('type')}"
            return result
        await go.wait()
        started = time.time()
        # The stream is read while the POST is answered, as a browser reads its
        # EventSource whatever its fetch is doing; a refused POST ends the stream.
        posted = asyncio.ensure_future(poster.message(stream.session_id, text))
        posted.add_done_callback(lambda _posted: _close_unless_accepted(_posted, stream))
        await _read_run(stream, result, started, timeout)
        if (status := await asyncio.wait_for(posted, 30)) != 202:
            result.error = f"POST answered {status}"
    except (TimeoutError, asyncio.TimeoutError):
        pass  # hung: not completed, no error frame
    except Exception as error:  # a benchmark reports failures instead of dying on them
        result.error = _refusal(posted) or f"{type(error).__name__}: {error}"
    finally:
        await stream.close()
        await poster.close()
    return result


async def floor_chat(
    port: int, cookie: str, text: str, go: asyncio.Event, timeout: float
) -> ClientResult:
    """As ``chat``, against the floor view (``benchmarks.floor_view``): on ``go`` one POST
    on a kept-alive connection, whose own response streams the run."""
    result = ClientResult()
    stream = EventStream(port, cookie, f"bench-{uuid.uuid4().hex[:12]}")
    try:
        await asyncio.wait_for(stream.connect(), 30)
        await go.wait()
        started = time.time()
        path = f"/_bench/floor/{stream.session_id}/"
        await asyncio.wait_for(stream.request(post_request(path, cookie, {"text": text})), timeout)
        await _read_run(stream, result, started, timeout)
    except (TimeoutError, asyncio.TimeoutError):
        pass  # hung: not completed, no error frame
    except Exception as error:  # a benchmark reports failures instead of dying on them
        result.error = f"{type(error).__name__}: {error}"
    finally:
        await stream.close()
    return result


async def _read_run(
    stream: EventStream, result: ClientResult, started: float, timeout: float
) -> None:
    """The run's events into ``result`` until its end, or ``timeout`` (TimeoutError)."""
    result.stage = "reading the run"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        frame = await asyncio.wait_for(stream.frame(), deadline - time.monotonic())
        if record_frame(result, frame, started):
            return


def _close_unless_accepted(posted: asyncio.Future[int], stream: EventStream) -> None:
    if _refusal(posted) and stream.writer is not None:
        stream.writer.close()  # the read waiting on it ends


def _refusal(posted: asyncio.Future[int] | None) -> str:
    """Why the POST failed, once it did; "" while it runs or when it was accepted."""
    if posted is None or not posted.done():
        return ""
    if posted.cancelled():
        return "POST cancelled"
    if (error := posted.exception()) is not None:
        return f"POST failed: {type(error).__name__}: {error}"
    return "" if posted.result() == 202 else f"POST answered {posted.result()}"


async def open_idle(port: int, cookies: list[str], count: int) -> list[EventStream]:
    """``count`` streams, each past its history frame, then left idle."""
    streams = []
    for i in range(count):
        stream = EventStream(port, cookies[i % len(cookies)], f"bench-idle-{uuid.uuid4().hex[:8]}")
        await asyncio.wait_for(stream.open(), 30)
        await asyncio.wait_for(stream.frame(), 30)
        streams.append(stream)
    return streams
