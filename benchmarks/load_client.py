"""The streaming benchmark's load client: one daphne worker, websocket clients, RSS samples.

Used by ``benchmarks.streaming``; every wait here is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from websockets.asyncio.client import connect

from benchmarks import sse_client

ROOT = Path(__file__).resolve().parent.parent


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


FULL_PACE_RUN = "bench tokens=50000 delay_ms=0 pad=190"

# Idle sockets first: RSS growth after a heavy scenario is hidden by memory it freed.


@dataclass
class ClientResult:
    ttft: float | None = None
    latencies: list[float] = field(default_factory=list)
    frames: int = 0
    completed: bool = False
    error: str | None = None
    stage: str = "connecting"  # where a hung client was stuck
    last_frame: str = ""


class Server:
    """One daphne worker serving ``benchmarks.streaming_asgi``."""

    def __init__(self, db: str, db_name: str, no_session: bool) -> None:
        self.port = _free_port()
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "benchmarks.streaming_settings",
            "BENCH_DB": db,
            "BENCH_DB_NAME": db_name,
            "BENCH_NO_SESSION": "1" if no_session else "0",
            "PYTHONPATH": str(ROOT),
        }
        self.process: subprocess.Popen[bytes] | None = None

    def prepare(self, users: int) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.streaming_app", str(users)],
            env=self.env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        return list(json.loads(out.stdout))

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "daphne",
                "-b",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-v",
                "0",
                "benchmarks.streaming_asgi:application",
            ],
            env=self.env,
            cwd=ROOT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("daphne did not start listening within 30 s")

    def rss(self) -> int:
        assert self.process is not None
        return int(psutil.Process(self.process.pid).memory_info().rss)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _open(server: Server, cookie: str, session_id: str, **kwargs: Any) -> Any:
    return connect(
        f"ws://127.0.0.1:{server.port}/ws/agent-sessions/{session_id}/",
        origin=f"http://127.0.0.1:{server.port}",  # type: ignore[arg-type]
        additional_headers={"Cookie": f"sessionid={cookie}"},
        max_size=2**22,
        open_timeout=30,
        **kwargs,
    )


async def chat(
    server: Server, cookie: str, text: str, go: asyncio.Event, timeout: float
) -> ClientResult:
    """Connect, wait for the history frame, start a run on ``go``, read until it ends."""
    result = ClientResult()
    try:
        async with _open(server, cookie, f"bench-{uuid.uuid4().hex[:12]}") as ws:
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


def record_frame(result: ClientResult, frame: dict[str, Any], started: float) -> bool:
    """Count a frame of the run into ``result``; True once the run is over."""
    now = time.time()
    result.frames += 1
    kind = frame.get("type")
    result.last_frame = str(kind)
    if kind == "text.delta":
        if result.ttft is None:
            result.ttft = now - started
        result.latencies += [
            now - float(token[1:].rstrip("x"))
            for token in frame["delta"].split()
            if token[:1] == "@"
        ]
    elif kind == "run.completed":
        result.completed = True
        return True
    elif kind in ("run.failed", "run.cancelled", "error"):
        result.error = f"{kind}: {frame.get('error') or frame.get('code')}"
        return True
    return False


async def non_reader(server: Server, cookie: str, text: str, seconds: float) -> None:
    """Starts a run and then reads nothing: the worker has to hold what it cannot send."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    sock.setblocking(False)
    async with _open(
        server, cookie, f"bench-mute-{uuid.uuid4().hex[:8]}", sock=sock, max_queue=1
    ) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "user_message", "text": text}))
        await asyncio.sleep(seconds)


async def full_pace_reader(server: Server, cookie: str, text: str, seconds: float) -> None:
    """The non-reader's control: the same run, read as it comes, for as long."""
    async with _open(server, cookie, f"bench-reader-{uuid.uuid4().hex[:8]}") as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "user_message", "text": text}))
        deadline = time.monotonic() + seconds
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
                if frame.get("type") in ("run.completed", "run.failed", "run.cancelled"):
                    await asyncio.sleep(max(0.0, deadline - time.monotonic()))
                    return


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
    server: Server, cookies: list[str], s: Scenario, sse: bool = False
) -> dict[str, Any]:
    """``s`` against ``server``: over websockets, or over SSE (``sse_client``)."""
    if s.non_reader_cost:
        return await _non_reader_cost(server, cookies, s)
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
        asyncio.create_task(
            sse_client.chat(server.port, cookies[i % len(cookies)], text, go, timeout)
            if sse
            else chat(server, cookies[i % len(cookies)], text, go, timeout)
        )
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
            ws = await _open(
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


# 50 000 tokens of ~200 bytes: far past the per-run byte cap, so the run is stopped by it.


async def probe(server: Server) -> dict[str, Any]:
    """The worker's own account of what it holds per connection (``streaming_asgi``)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        writer.write(
            b"GET /_bench/buffers HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        raw = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    return dict(json.loads(raw.split(b"\r\n\r\n", 1)[1]))


async def _big_run(server: Server, cookie: str, read: bool) -> dict[str, Any]:
    """One run of ``FULL_PACE_RUN`` on a socket with a 4 KiB receive buffer, read or not.

    RSS is sampled before connecting, at its peak, once the run has ended with the socket
    still open ("held": what the worker keeps for the socket), and after it closed.
    """
    await asyncio.sleep(1.0)  # let the previous run's memory settle
    before = server.rss()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    sock.setblocking(False)
    port = str(sock.getsockname()[1])
    peak, transport_peak, kernel_peak, received = before, 0, 0, 0
    ended, seqs = "", []
    ws = await _open(
        server,
        cookie,
        f"bench-big-{uuid.uuid4().hex[:8]}",
        sock=sock,
        max_queue=1,
        close_timeout=1,
    )
    try:
        await asyncio.wait_for(ws.recv(), 30)  # the history frame
        await ws.send(json.dumps({"type": "user_message", "text": FULL_PACE_RUN}))

        async def read_all() -> None:
            nonlocal received, ended
            while True:
                frame = await ws.recv()
                received += len(frame)
                event = json.loads(frame)
                seqs.append(int(event.get("seq", 0)))
                if event.get("type") in ("run.completed", "run.failed"):
                    ended = str(event.get("error", {}).get("code", event["type"]))
                    return

        started = time.monotonic()
        reading = asyncio.create_task(read_all()) if read else None
        # A reader that has not seen the end by then is reported (``ended`` empty).
        deadline = time.monotonic() + 20
        await asyncio.sleep(0.2)
        while time.monotonic() < deadline:
            peak = max(peak, server.rss())
            state = await probe(server)
            mine = state["connections"].get(port, {})
            transport_peak = max(transport_peak, mine.get("transport", 0))
            kernel_peak = max(kernel_peak, mine.get("kernel", 0))
            if state["runs"] == 0 and (reading is None or reading.done()):
                break
            await asyncio.sleep(0.05)
        if reading is not None:
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)
        await asyncio.sleep(0.3)
        held = server.rss()
        peak = max(peak, held)
        state = await probe(server)
        transport_end = state["connections"].get(port, {}).get("transport", 0)
    finally:
        await ws.close()
    await asyncio.sleep(1.0)
    after = server.rss()
    return {
        "read": read,
        "rss_growth_peak": peak - before,
        "rss_growth_held": held - before,
        "rss_growth_after_close": after - before,
        "transport_bytes_peak": transport_peak,
        "transport_bytes_at_end": transport_end,
        "kernel_bytes_peak": kernel_peak,
        "received_bytes": received,
        "ended": ended if read else "not read",
        "missing_seqs": max(seqs, default=0) - len(set(seqs)),
        "seconds": round(time.monotonic() - started, 2),
    }


def _median(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


async def _non_reader_cost(server: Server, cookies: list[str], s: Scenario) -> dict[str, Any]:
    """What not reading costs the worker: a non-reading socket against a reading control.

    Identical runs (each stopped by the per-run byte cap), one at a time, alternating
    which goes first; the cost is the median over repeats of the difference in RSS held
    at the end of the run (non-reader minus reader), so per-run costs and allocator
    noise that both share cancel out.
    """
    # Unmeasured: the worker's first big run grows its heap by tens of MiB, read or not.
    await _big_run(server, cookies[0], read=True)
    pairs = []
    for i in range(s.repeats):
        first = await _big_run(server, cookies[i % len(cookies)], read=i % 2 == 0)
        second = await _big_run(server, cookies[i % len(cookies)], read=i % 2 == 1)
        reader, mute = (first, second) if first["read"] else (second, first)
        pairs.append((reader, mute))
    mib = 2**20
    cost_held = _median([m["rss_growth_held"] - r["rss_growth_held"] for r, m in pairs])
    cost_peak = _median([m["rss_growth_peak"] - r["rss_growth_peak"] for r, m in pairs])
    return {
        "scenario": s.name,
        "clients": 1,
        "repeats": s.repeats,
        "cost_held_mib": round(cost_held / mib, 2),
        "cost_peak_mib": round(cost_peak / mib, 2),
        "reader_growth_held_mib": round(_median([r["rss_growth_held"] for r, _ in pairs]) / mib, 2),
        "non_reader_growth_held_mib": round(
            _median([m["rss_growth_held"] for _, m in pairs]) / mib, 2
        ),
        "non_reader_transport_mib": round(
            _median([m["transport_bytes_peak"] for _, m in pairs]) / mib, 2
        ),
        "non_reader_kernel_mib": round(
            _median([m["kernel_bytes_peak"] for _, m in pairs]) / mib, 2
        ),
        "reader_received_mib": round(_median([r["received_bytes"] for r, _ in pairs]) / mib, 2),
        "after_close_mib": round(_median([m["rss_growth_after_close"] for _, m in pairs]) / mib, 2),
        "rss_cost_per_pair_mib": [
            round((m["rss_growth_held"] - r["rss_growth_held"]) / mib, 2) for r, m in pairs
        ],
        "readers_without_end": sum(1 for r, _ in pairs if not r["ended"]),
        "runs": [run for pair in pairs for run in pair],
    }
