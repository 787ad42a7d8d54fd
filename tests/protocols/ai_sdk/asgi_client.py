"""An HTTP client of the AI SDK adapter through Django's real ASGI handler.

As ``tests.sse.client`` does for the SSE transport: the real middleware (sessions,
CSRF, authentication), the response's chunks one at a time as the server writes them,
and a client that goes away (``http.disconnect``) mid-response, as ``stop()`` does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.sse.client import CSRF_TOKEN, WAIT_SECONDS, Response, _scope, application

API = "/ai-sdk/chat"


class Call:
    """One request to the adapter, its response read as the protocol's chunks."""

    opened: list[Call] = []  # ended after each test (see conftest)

    def __init__(
        self, method: str, url: str, cookie: bytes | None, body: Any = None, *, csrf: bool = True
    ) -> None:
        data = (
            body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
        )
        headers = [(b"content-type", b"application/json")]
        if csrf:
            headers.append((b"x-csrftoken", CSRF_TOKEN.encode()))
        self.response = Response()
        self._body = data
        self._asked = False
        self._gone = asyncio.Event()
        self._buffer = ""
        scope = _scope(method, url, cookie, headers)
        self.task = asyncio.create_task(application(scope, self._receive, self.response.send))
        Call.opened.append(self)

    async def _receive(self) -> dict[str, Any]:
        if not self._asked:
            self._asked = True
            return {"type": "http.request", "body": self._body, "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def status(self) -> int:
        await asyncio.wait_for(self.response.started.wait(), WAIT_SECONDS)
        return self.response.status

    async def next(self) -> dict[str, Any] | str | None:
        """The next chunk (a dict), ``"[DONE]"``, or None when the response ended."""
        while True:
            while "\n\n" not in self._buffer:
                body = await asyncio.wait_for(self.response.chunks.get(), WAIT_SECONDS)
                if body is None:
                    return None
                self._buffer += body.decode()
            block, self._buffer = self._buffer.split("\n\n", 1)
            data = [line[6:] for line in block.splitlines() if line.startswith("data: ")]
            if data:  # (else a comment: a heartbeat)
                text = "\n".join(data)
                return text if text == "[DONE]" else dict(json.loads(text))

    async def chunks_until(self, *types: str) -> list[Any]:
        """Chunks up to and including the first of ``types`` (or ``"[DONE]"``)."""
        got: list[Any] = []
        while True:
            chunk = await self.next()
            assert chunk is not None, f"the response ended after {got}"
            got.append(chunk)
            if chunk in types or (isinstance(chunk, dict) and chunk["type"] in types):
                return got

    async def body(self) -> Any:
        """The whole body: a JSON response's value, or the stream's chunks."""
        await self.status()
        if self.response.headers.get("content-type", "").startswith("application/json"):
            text = b""
            while (body := await self.response.chunks.get()) is not None:
                text += body
            return json.loads(text or b"null")
        chunks = []
        while (chunk := await self.next()) is not None:
            chunks.append(chunk)
        return chunks

    async def close(self) -> None:
        """The client goes away (an aborted fetch)."""
        self._gone.set()
        try:
            await asyncio.wait_for(self.task, WAIT_SECONDS)
        finally:
            if self in Call.opened:
                Call.opened.remove(self)


def user_message(text: str, message_id: str = "msg-1", **fields: Any) -> dict[str, Any]:
    """A person's message as ``useChat`` sends it."""
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}], **fields}


def send(chat_id: str, cookie: bytes | None, *messages: dict[str, Any]) -> Call:
    """``DefaultChatTransport.sendMessages``: the chat's messages, the last one new."""
    body = {"id": chat_id, "messages": list(messages), "trigger": "submit-message"}
    return Call("POST", API, cookie, {**body, "messageId": None})


def get(chat_id: str, tail: str, cookie: bytes | None) -> Call:
    return Call("GET", f"{API}/{chat_id}/{tail}", cookie)
