"""The example project's ASGI application, optionally without conversation memory.

``BENCH_NO_SESSION=1`` swaps the consumer's ``DjangoSession`` for a session that stores
nothing: the same stack minus the session's database work, as the baseline.

``GET /_bench/buffers`` answers with what the worker holds for each open connection: the
bytes daphne has written to the connection's Twisted transport that the kernel has not
taken yet (the worker's memory), the bytes in the kernel's send queue (not the worker's),
keyed by the client's port; and the number of runs this worker is running.
"""

from __future__ import annotations

import fcntl
import json
import os
import struct
import termios
import weakref
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.streaming_settings")

from daphne.server import Server as DaphneServer

from example_project.asgi import application as example_application

if os.environ.get("BENCH_NO_SESSION") == "1":
    from benchmarks.streaming_app import NoMemorySession
    from django_agent_sessions.websocket import consumer

    consumer.DjangoSession = NoMemorySession  # type: ignore[attr-defined,assignment,misc]

# daphne keeps its connections on the server object, which the application cannot reach.
_protocols: weakref.WeakSet[Any] = weakref.WeakSet()
_protocol_connected = DaphneServer.protocol_connected


def _track(self: Any, protocol: Any) -> None:
    _protocols.add(protocol)
    _protocol_connected(self, protocol)


DaphneServer.protocol_connected = _track  # type: ignore[method-assign]


def buffers() -> dict[str, Any]:
    from django_agent_sessions.streaming.running import active_runs

    held: dict[str, dict[str, int]] = {}
    for protocol in list(_protocols):
        transport = getattr(protocol, "transport", None)
        if transport is None or not hasattr(transport, "dataBuffer"):
            continue
        try:
            port = transport.getPeer().port
            queued = fcntl.ioctl(transport.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
            kernel = struct.unpack("i", queued)[0]
        except (OSError, ValueError):
            kernel = -1  # closed meanwhile
        held[str(port)] = {
            "transport": len(transport.dataBuffer) - transport.offset + transport._tempDataLen,
            "kernel": kernel,
        }
    return {"runs": len(active_runs._local_runs), "connections": held}


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http" and scope["path"] == "/_bench/buffers":
        body = json.dumps(buffers()).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    await example_application(scope, receive, send)


__all__ = ["application"]
