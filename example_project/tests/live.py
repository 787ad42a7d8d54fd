"""A plain websocket client for live daphne servers, as a front end would be.

``log_in`` signs in through the login form (CSRF included) and returns the session
cookie; ``LiveSocket`` speaks the wire protocol over the ``websockets`` library, so the
server sees a real TCP client that can vanish at any moment.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import time
import urllib.parse
import urllib.request
from typing import Any

import websockets

_ENDS = {"run.completed", "run.cancelled", "run.failed", "error"}
_CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def log_in(server_url: str, user: tuple[str, str]) -> str:
    """Sign ``user`` in through the login form; the ``Cookie`` header to send."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(server_url + "/accounts/login/", timeout=15) as page:
        token = _CSRF_FIELD.search(page.read().decode())
    assert token is not None, "the login page has no CSRF token"
    form = urllib.parse.urlencode(
        {"username": user[0], "password": user[1], "csrfmiddlewaretoken": token.group(1)}
    ).encode()
    request = urllib.request.Request(
        server_url + "/accounts/login/", data=form, headers={"Referer": server_url + "/"}
    )
    with opener.open(request, timeout=15):
        pass
    cookies = {cookie.name: cookie.value for cookie in jar}
    assert "sessionid" in cookies, "the login did not succeed"
    return f"sessionid={cookies['sessionid']}"


class LiveSocket:
    """One websocket to ``/ws/agent-sessions/<session_id>/`` of a live server."""

    def __init__(self, server_url: str, session_id: str, cookie: str) -> None:
        self.url = server_url.replace("http://", "ws://") + f"/ws/agent-sessions/{session_id}/"
        self.origin = server_url
        self.cookie = cookie
        self.connection: Any = None
        self.received: list[dict[str, Any]] = []

    async def open(self) -> dict[str, Any]:
        """Connect; the history frame."""
        self.connection = await websockets.connect(
            self.url,
            origin=self.origin,  # type: ignore[arg-type]
            additional_headers={"Cookie": self.cookie},
            open_timeout=15,
            max_size=None,
        )
        history = await self.receive()
        assert history["type"] == "history", history
        return history

    async def send(self, frame: Any) -> None:
        await self.connection.send(json.dumps(frame))

    async def send_text(self, text: str) -> None:
        await self.connection.send(text)

    async def receive(self, timeout: float = 15) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.connection.recv(), timeout)
        frame: dict[str, Any] = json.loads(raw)
        self.received.append(frame)
        return frame

    async def until(self, *types: str, timeout: float = 15) -> list[dict[str, Any]]:
        """Frames up to and including the first of ``types`` (within ``timeout`` overall)."""
        deadline = time.monotonic() + timeout
        frames = []
        while True:
            frame = await self.receive(max(0.01, deadline - time.monotonic()))
            frames.append(frame)
            if frame["type"] in types:
                return frames

    async def until_run(self, timeout: float = 15) -> str:
        """The id of the run this tab learns of: from ``run.started``, or, when the run
        started before the tab's worker joined the conversation (a first message sent
        from another worker's tab), from the catch-up's ``history`` frame showing it."""
        while True:
            frame = (await self.until("run.started", "history", timeout=timeout))[-1]
            if frame["type"] == "run.started":
                return str(frame["run_id"])
            if frame.get("active_run"):
                return str(frame["active_run"]["run_id"])

    async def until_end(self, timeout: float = 15) -> list[dict[str, Any]]:
        """Frames up to the end of a run as the tab learns it: its terminal event (or an
        ``error``), or, when the layer lost the end, a ``history`` frame of the stored
        outcome: items, and no run in flight or waiting (docs/wire-protocol.md,
        "Nothing a tab follows is lost")."""
        deadline = time.monotonic() + timeout
        frames = []
        while True:
            frame = await self.receive(max(0.01, deadline - time.monotonic()))
            frames.append(frame)
            if frame["type"] in _ENDS or _settled_history(frame):
                return frames

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()

    def abort(self) -> None:
        """Drop the TCP connection without a close handshake (a tab that vanished)."""
        if self.connection is not None:
            self.connection.transport.abort()


def _settled_history(frame: dict[str, Any]) -> bool:
    return (
        frame["type"] == "history"
        and bool(frame["items"])
        and not frame["active_run"]
        and not frame["pending_approvals"]
    )
