"""Async clients of a live server's two transports, for tests that drive several at once.

``LiveSocket`` is a websocket tab (``websockets``); ``LiveSseTab`` holds
``GET .../events/`` open over HTTP/1.0 (the body comes unchunked, one event after the
other) and POSTs client frames as JSON with a CSRF token of its own. Both yield frames
as dicts from ``frame()``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

CSRF = "b" * 32
WAIT_SECONDS = 20.0


class LiveSocket:
    """A websocket tab on ``ws://127.0.0.1:<port>/ws/agent-sessions/<session_id>/``."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    @classmethod
    async def open(cls, port: int, session_id: str, cookie: str) -> LiveSocket:
        connection = await connect(
            f"ws://127.0.0.1:{port}/ws/agent-sessions/{session_id}/",
            additional_headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"},
            open_timeout=WAIT_SECONDS,
        )
        return cls(connection)

    async def frame(self, timeout: float = WAIT_SECONDS) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(self.connection.recv(), timeout))
        return frame

    async def say(self, text: str) -> None:
        await self.connection.send(json.dumps({"type": "user_message", "text": text}))

    async def close(self) -> None:
        await self.connection.close()


class LiveSseTab:
    """A browser's event stream on ``<chat>/c/<session_id>/events/`` of a live server
    (``chat``: where the project includes the chat's URLs, ``/chat`` in the tests')."""

    def __init__(self, port: int, session_id: str, cookie: str, chat: str = "/chat") -> None:
        self.port, self.session_id, self.cookie, self.chat = port, session_id, cookie, chat
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def open(self) -> LiveSseTab:
        self._reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
        path = f"{self.chat}/c/{self.session_id}/events/"
        self._writer.write(_request("GET", path, self.cookie))
        await self._writer.drain()
        status = await asyncio.wait_for(self._reader.readline(), WAIT_SECONDS)
        assert b" 200 " in status, status
        while (await self._reader.readline()).strip():
            pass  # the headers
        return self

    async def frame(self, timeout: float = WAIT_SECONDS) -> dict[str, Any]:
        assert self._reader is not None
        data: list[str] = []
        while True:
            line = (await asyncio.wait_for(self._reader.readline(), timeout)).decode()
            assert line, "the stream ended"
            line = line.rstrip("\n")
            if line.startswith("data: "):
                data.append(line.removeprefix("data: "))
            elif line == "" and data:
                frame: dict[str, Any] = json.loads("".join(data))
                return frame

    async def say(self, text: str) -> None:
        status, body = await post_json(
            self.port, f"{self.chat}/c/{self.session_id}/messages/", {"text": text}, self.cookie
        )
        assert status == 202, (status, body)

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


async def open_tab(
    transport: str, port: int, session_id: str, cookie: str, chat: str = "/chat"
) -> Any:
    """A tab of ``transport`` ("websocket" or "sse") on a conversation of a live server."""
    if transport == "websocket":
        return await LiveSocket.open(port, session_id, cookie)
    return await LiveSseTab(port, session_id, cookie, chat).open()


async def stop_from(tab: Any) -> None:
    """The tab's Stop: a ``cancel`` frame, on either transport."""
    if isinstance(tab, LiveSocket):
        await tab.connection.send(json.dumps({"type": "cancel"}))
        return
    path = f"{tab.chat}/c/{tab.session_id}/cancel/"
    status, body = await post_json(tab.port, path, {}, tab.cookie)
    assert status == 202, (status, body)


async def decide_from(tab: Any, call_id: str, approve: bool) -> None:
    """The tab's decision on a tool call that waits for approval, on either transport."""
    if isinstance(tab, LiveSocket):
        frame = {"type": "approval", "call_id": call_id, "approve": approve}
        await tab.connection.send(json.dumps(frame))
        return
    path = f"{tab.chat}/c/{tab.session_id}/approvals/{call_id}/"
    status, body = await post_json(tab.port, path, {"approve": approve}, tab.cookie)
    assert status == 202, (status, body)


async def frames_until(tab: Any, kinds: set[str], frames: list[dict[str, Any]]) -> None:
    """Appends the tab's frames to ``frames`` until one of a type in ``kinds`` (bounded:
    each frame within ``WAIT_SECONDS``)."""
    while True:
        frame = await tab.frame()
        frames.append(frame)
        if frame["type"] in kinds:
            return


async def post_json(port: int, path: str, body: dict[str, Any], cookie: str) -> tuple[int, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(_request("POST", path, cookie, json.dumps(body).encode()))
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), WAIT_SECONDS)
    finally:
        writer.close()
    head, _, content = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(content) if content.startswith(b"{") else content


def _request(method: str, path: str, cookie: str, body: bytes = b"") -> bytes:
    headers = [
        f"{method} {path} HTTP/1.0",
        "Host: 127.0.0.1",
        f"Cookie: {cookie}; csrftoken={CSRF}",
        f"X-CSRFToken: {CSRF}",
    ]
    if body:
        headers += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body
