"""The streaming benchmark's load client: bounded scenarios of chats, idle sockets and
clients that never read against one worker (``daphne_worker``), with RSS samples.

Used by ``benchmarks.streaming``; every wait here is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from benchmarks import adapter_clients, non_reader_cost, sse_client
from benchmarks.client_result import ClientResult, record_frame
from benchmarks.daphne_worker import Server, open_socket
from benchmarks.non_reader_cost import FULL_PACE_RUN


@dataclass
class Scenario:
    name: str
    clients: int
    tokens: int
    delay_ms: int
    pad: int = 0
    non_reader: bool = False
    # The non-reader's control: the same full-pace run, read by its client.
    full_pace_reader: bool = False
    idle_only: bool = False
    baseline_too: bool = True
    # One big run at a time, alternately read and not read, ``repeats`` times each.
    non_reader_cost: bool = False
    repeats: int = 3
    # Sockets that connect first and stay open, idle, while the runs stream.
    idle_too: int = 0


async def chat(
    server: Server, cookie: str, text: str, go: asyncio.Event, timeout: float
) -> ClientResult:
    """Connect, wait for the history frame, start a run on ``go``, read until it ends."""
    result = ClientResult()
    try:
        async with open_socket(server, cookie, f"bench-{uuid.uuid4().hex[:12]}") as ws:
            result.stage = "waiting for the history frame"
            first = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if first.get("type") != "history":
                result.error = f"first frame was {first.get('type')}"
                return result
            await go.wait()
            started = time.time()
            await ws.send(json.dumps({"type": "user_message", "text": text}))
            result.stage = "reading the run"
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                frame = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
                if record_frame(result, frame, started):
                    return result
    except (TimeoutError, asyncio.TimeoutError):
        pass  # hung: not completed, no error frame
    except Exception as error:  # a benchmark reports failures instead of dying on them
        result.error = f"{type(error).__name__}: {error}"
    return result


async def non_reader(server: Server, cookie: str, text: str, seconds: float) -> None:
    """Starts a run and then reads nothing: the worker has to hold what it cannot send."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    sock.setblocking(False)
    async with open_socket(
        server, cookie, f"bench-mute-{uuid.uuid4().hex[:8]}", sock=sock, max_queue=1
    ) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "user_message", "text": text}))
        await asyncio.sleep(seconds)


async def full_pace_reader(server: Server, cookie: str, text: str, seconds: float) -> None:
    """The non-reader's control: the same run, read as it comes, for as long."""
    async with open_socket(server, cookie, f"bench-reader-{uuid.uuid4().hex[:8]}") as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "user_message", "text": text}))
        deadline = time.monotonic() + seconds
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
                if frame.get("type") in ("run.completed", "run.failed", "run.cancelled"):
                    await asyncio.sleep(max(0.0, deadline - time.monotonic()))
                    return


def _chat(
    transport: str, server: Server, cookie: str, text: str, go: asyncio.Event, timeout: float
) -> Coroutine[Any, Any, ClientResult]:
    if transport == "sse":
        return sse_client.chat(server.port, cookie, text, go, timeout)
    if transport == "floor":
        return sse_client.floor_chat(server.port, cookie, text, go, timeout)
    if transport == "ai-sdk":
        return adapter_clients.chat(adapter_clients.AI_SDK, server.port, cookie, text, go, timeout)
    if transport == "ag-ui":
        return adapter_clients.chat(adapter_clients.AG_UI, server.port, cookie, text, go, timeout)
    return chat(server, cookie, text, go, timeout)


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000, 1)


async def _sample_rss(server: Server, peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], server.rss())
        await asyncio.sleep(0.05)


async def run_scenario(
    server: Server, cookies: list[str], s: Scenario, transport: str = "websocket"
) -> dict[str, Any]:
    """``s`` against ``server``: over websockets, over SSE (``sse_client``), or against
    the floor view (``transport="floor"``, ``benchmarks.floor_view``)."""
    sse = transport == "sse"
    if s.non_reader_cost:
        return await non_reader_cost.measure(server, cookies, s.name, s.repeats)
    before = server.rss()
    if s.idle_only:
        return await _idle(server, cookies, s, before, sse)
    peak, stop = [before], asyncio.Event()
    sampler = asyncio.create_task(_sample_rss(server, peak, stop))
    text = f"bench tokens={s.tokens} delay_ms={s.delay_ms} pad={s.pad}"
    expected = s.tokens * s.delay_ms / 1000
    timeout = 30 + expected * 3
    go = asyncio.Event()
    clients = [
        asyncio.create_task(_chat(transport, server, cookies[i % len(cookies)], text, go, timeout))
        for i in range(s.clients)
    ]
    idle = await _open_idle(server, cookies, s.idle_too)
    idle_rss = server.rss()
    mute = None
    if s.non_reader or s.full_pace_reader:
        # 50 000 tokens of ~200 bytes: far past the per-run byte cap.
        extra = non_reader if s.non_reader else full_pace_reader
        mute = asyncio.create_task(extra(server, cookies[-1], FULL_PACE_RUN, expected + 1))
    await asyncio.sleep(0.5)  # let every socket connect and get its history first
    started = time.perf_counter()
    go.set()
    results = await asyncio.gather(*clients)
    wall = time.perf_counter() - started
    if mute is not None:
        await mute
    stop.set()
    await sampler
    await asyncio.gather(*(ws.close() for ws in idle), return_exceptions=True)
    ttfts = [r.ttft for r in results if r.ttft is not None]
    latencies = [x for r in results for x in r.latencies]
    frames = sum(r.frames for r in results)
    errors = sorted({r.error for r in results if r.error})
    return {
        "scenario": s.name,
        "clients": s.clients,
        "ttft_p50_ms": _pct(ttfts, 0.5),
        "ttft_p99_ms": _pct(ttfts, 0.99),
        "delta_p50_ms": _pct(latencies, 0.5),
        "delta_p99_ms": _pct(latencies, 0.99),
        "frames_per_s": round(frames / wall, 1),
        "tokens": len(latencies),
        "completed": sum(r.completed for r in results),
        "hung": sum(1 for r in results if not r.completed and not r.error),
        "errors": errors[:5],
        "error_count": sum(1 for r in results if r.error),
        "idle_open": len(idle),
        "rss_with_idle_mib": round(idle_rss / 2**20, 1),
        "rss_before_mib": round(before / 2**20, 1),
        "rss_peak_mib": round(peak[0] / 2**20, 1),
        "rss_growth_mib": round((peak[0] - before) / 2**20, 1),
        "seconds": round(wall, 2),
    }


async def _open_idle(server: Server, cookies: list[str], count: int) -> list[Any]:
    """``count`` sockets, each connected and past its history frame, then left idle."""
    sockets = []
    try:
        for i in range(count):
            ws = await open_socket(
                server, cookies[i % len(cookies)], f"bench-idle-{uuid.uuid4().hex[:8]}"
            )
            await ws.recv()
            sockets.append(ws)
    except BaseException:
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
        raise
    return sockets


async def _idle(
    server: Server, cookies: list[str], s: Scenario, before: int, sse: bool = False
) -> dict[str, Any]:
    sockets: list[Any] = []
    try:
        if sse:
            sockets = await sse_client.open_idle(server.port, cookies, s.clients)
        else:
            sockets = await _open_idle(server, cookies, s.clients)
        await asyncio.sleep(0.5)
        after = server.rss()
    finally:
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    return {
        "scenario": s.name,
        "clients": s.clients,
        "open": len(sockets),
        "rss_before_mib": round(before / 2**20, 1),
        "rss_after_mib": round(after / 2**20, 1),
        "kib_per_socket": round((after - before) / 1024 / max(1, len(sockets)), 1),
    }
