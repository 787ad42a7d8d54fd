"""Helpers for driving the websocket consumer through the real middleware stack."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from channels.testing import WebsocketCommunicator
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client

from tests.asgi import websocket_application

ORIGIN = b"http://testserver"


def login_cookie(user: Any) -> bytes:
    """A session cookie of ``user``, as a browser that signed in would send it."""
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def anonymous_cookie() -> bytes:
    """The cookie of a visitor whose Django session exists but who is not signed in."""
    store = SessionStore()
    store["visited"] = True
    store.save()
    return f"sessionid={store.session_key}".encode()


class Socket:
    # Every socket a test opened, so that a failing test cannot leave one running into
    # the next test (whose event loop is another one).
    opened: list[Socket] = []

    def __init__(
        self,
        session_id: str,
        cookie: bytes | None,
        origin: bytes | None = ORIGIN,
        query: str = "",
    ):
        headers = []
        if origin is not None:
            headers.append((b"origin", origin))
        if cookie is not None:
            headers.append((b"cookie", cookie))
        self.communicator = WebsocketCommunicator(
            websocket_application,
            f"/ws/agent-sessions/{session_id}/" + (f"?{query}" if query else ""),
            headers=headers,
        )
        self.received: list[dict[str, Any]] = []
        Socket.opened.append(self)

    async def connect(self) -> tuple[bool, Any]:
        result: tuple[bool, Any] = await self.communicator.connect(timeout=5)
        return result

    async def open(self) -> dict[str, Any]:
        """Connect and return the history frame."""
        connected, _ = await self.connect()
        assert connected
        history = await self.receive()
        assert history["type"] == "history", history
        return history

    async def send(self, frame: Any) -> None:
        await self.communicator.send_to(text_data=json.dumps(frame))

    async def say(self, text: str) -> None:
        await self.send({"type": "user_message", "text": text})

    async def receive(self, timeout: float = 5) -> dict[str, Any]:
        frame: dict[str, Any] = await self.communicator.receive_json_from(timeout=timeout)
        self.received.append(frame)
        return frame

    async def until(self, *types: str, timeout: float = 5) -> list[dict[str, Any]]:
        """Frames up to and including the first of one of ``types``.

        Raises ``TimeoutError`` naming what came instead, when no frame came for
        ``timeout`` seconds (a run that ended otherwise, or a socket that went quiet).
        """
        frames: list[dict[str, Any]] = []
        while True:
            try:
                frame = await self.receive(timeout)
            except asyncio.TimeoutError as quiet:
                came = [frame["type"] for frame in frames]
                raise asyncio.TimeoutError(
                    f"waited for {types}; came before the silence: {came}"
                ) from quiet
            frames.append(frame)
            if frame["type"] in types:
                return frames

    async def closed_with(self) -> int:
        output = await self.communicator.receive_output(timeout=5)
        assert output["type"] == "websocket.close", output
        return int(output.get("code", 1000))

    async def nothing_more(self, wait: float = 0.2) -> bool:
        return bool(await self.communicator.receive_nothing(timeout=wait))

    async def close(self) -> None:
        await self.communicator.disconnect()
        await asyncio.sleep(0)


def of_type(frames: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [frame for frame in frames if frame["type"] == kind]


def text_of(frames: list[dict[str, Any]]) -> str:
    return "".join(frame["delta"] for frame in of_type(frames, "text.delta"))


async def close_all_sockets() -> None:
    from channels.layers import channel_layers

    sockets, Socket.opened = Socket.opened, []
    for socket in sockets:
        if not socket.communicator.future.done():
            await socket.close()
    # Channel layers hold connections and locks bound to this test's event loop.
    channel_layers.backends.clear()
