"""A server of the example project for each chat transport, for tests that run on both."""

from __future__ import annotations

from pathlib import Path

from example_project.tests.servers import DaphneServer, UvicornServer


def started_for(transport: str, name: str, log_dir: Path, env: dict[str, str]) -> DaphneServer:
    """A started server whose chat pages use ``transport``: daphne serving websockets, or
    uvicorn (a plain ASGI server, no Channels in the serving path) serving SSE."""
    if transport == "sse":
        sse = {**env, "CHAT_TRANSPORT": "sse"}
        server: DaphneServer = UvicornServer(f"{name}-sse", log_dir, sse)
    elif transport == "websocket":
        server = DaphneServer(name, log_dir, env)
    else:
        raise ValueError(f"unknown chat transport {transport!r}: websocket or sse")
    server.start()
    return server
