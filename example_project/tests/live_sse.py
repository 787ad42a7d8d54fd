"""A plain HTTP client of the SSE transport for live servers, as a front end would be.

``LiveStream`` holds ``GET .../events/`` open on a thread of its own (http.client undoes
the chunked encoding line by line) and queues each event as it arrives; ``post`` sends a
client frame as JSON with a CSRF token of its own (cookie and header).
"""

from __future__ import annotations

import http.client
import json
import queue
import threading
import time
from typing import Any
from urllib.parse import urlsplit

CSRF = "b" * 32


def _connection(server_url: str, timeout: float) -> http.client.HTTPConnection:
    parts = urlsplit(server_url)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)


def post(server_url: str, path: str, body: dict[str, Any], cookie: str) -> tuple[int, Any]:
    connection = _connection(server_url, 15)
    try:
        connection.request(
            "POST",
            path,
            body=json.dumps(body),
            headers={
                "Cookie": f"{cookie}; csrftoken={CSRF}",
                "X-CSRFToken": CSRF,
                "Content-Type": "application/json",
            },
        )
        response = connection.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data.startswith(b"{") else data
    finally:
        connection.close()


class LiveStream:
    """``GET <server>/c/<session_id>/events/``; ``frame()`` is the next frame.

    ``body``: a POST of it to ``path`` instead, whose own response is the stream (the
    AI SDK adapter's ``useChat`` request); its ``data: [DONE]`` ends the stream."""

    def __init__(
        self,
        server_url: str,
        session_id: str,
        cookie: str,
        *,
        path: str = "",
        body: dict[str, Any] | None = None,
    ) -> None:
        self.connection = _connection(server_url, 60)
        if body is None:
            self.connection.request("GET", f"/c/{session_id}/events/", headers={"Cookie": cookie})
        else:
            headers = {
                "Cookie": f"{cookie}; csrftoken={CSRF}",
                "X-CSRFToken": CSRF,
                "Content-Type": "application/json",
            }
            self.connection.request("POST", path, body=json.dumps(body), headers=headers)
        self.response = self.connection.getresponse()
        assert self.response.status == 200, self.response.status
        self.frames: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        data: list[str] = []
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\n")
                if line == "data: [DONE]":
                    break
                if line.startswith("data: "):
                    data.append(line.removeprefix("data: "))
                elif line == "" and data:
                    self.frames.put(json.loads("".join(data)))
                    data = []
        except Exception:
            # Closed by the test (http.client then fails in several ways), or the server
            # went away: the stream ended either way.
            pass
        self.frames.put(None)

    def frame(self, timeout: float = 20.0) -> dict[str, Any]:
        frame = self.frames.get(timeout=timeout)
        assert frame is not None, "the stream ended"
        return frame

    def until(self, *types: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Frames up to and including the first of one of ``types``."""
        deadline = time.monotonic() + timeout
        frames = []
        while True:
            frames.append(self.frame(max(0.1, deadline - time.monotonic())))
            if frames[-1]["type"] in types:
                return frames

    def close(self) -> None:
        if self.connection.sock is not None:
            self.connection.sock.shutdown(2)
        self.connection.close()
