"""Requests to the ChatKit adapter through Django's real ASGI handler (the middleware,
CSRF and authentication included), as ``tests.sse.client`` sends them: JSON POSTs, a
multipart upload and a GET, each read whole."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.sse.client import CSRF_TOKEN, WAIT_SECONDS, Response, _scope, application, post

API = "/chatkit/"
BOUNDARY = b"chatkit-test-boundary"

__all__ = ["API", "get", "post", "upload"]


async def _call(method: str, url: str, cookie: bytes | None, body: bytes, headers: list) -> Any:
    response = Response()
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    scope = _scope(method, url, cookie, headers)
    await asyncio.wait_for(application(scope, receive, response.send), WAIT_SECONDS)
    data = b""
    while (chunk := response.chunks.get_nowait()) is not None:
        data += chunk
    return response.status, data, response.headers


async def upload(url: str, cookie: bytes | None, data: bytes) -> tuple[int, bytes, dict]:
    """POST ``data`` as the multipart ``file`` field, with the CSRF token."""
    body = (
        b"--" + BOUNDARY + b"\r\n"
        b'Content-Disposition: form-data; name="file"; filename="f.bin"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n" + data + b"\r\n"
        b"--" + BOUNDARY + b"--\r\n"
    )
    headers = [
        (b"content-type", b"multipart/form-data; boundary=" + BOUNDARY),
        (b"x-csrftoken", CSRF_TOKEN.encode()),
        (b"content-length", str(len(body)).encode()),  # the multipart parser reads it
    ]
    return await _call("POST", url, cookie, body, headers)


async def get(url: str, cookie: bytes | None) -> tuple[int, bytes, dict]:
    return await _call("GET", url, cookie, b"", [])
