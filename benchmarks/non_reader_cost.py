"""What a client that never reads costs the worker, against one that reads the same run.

Used by the streaming benchmark's ``non_reader_cost`` scenario; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import uuid
from typing import Any

from benchmarks.daphne_worker import Server, open_socket

# 50 000 tokens of ~200 bytes: far past the per-run byte cap, so the run is stopped by it.
FULL_PACE_RUN = "bench tokens=50000 delay_ms=0 pad=190"


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
    ws = await open_socket(
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


async def measure(server: Server, cookies: list[str], name: str, repeats: int) -> dict[str, Any]:
    """What not reading costs the worker: a non-reading socket against a reading control.

    Identical runs (each stopped by the per-run byte cap), one at a time, alternating
    which goes first; the cost is the median over repeats of the difference in RSS held
    at the end of the run (non-reader minus reader), so per-run costs and allocator
    noise that both share cancel out.
    """
    # Unmeasured: the worker's first big run grows its heap by tens of MiB, read or not.
    await _big_run(server, cookies[0], read=True)
    pairs = []
    for i in range(repeats):
        first = await _big_run(server, cookies[i % len(cookies)], read=i % 2 == 0)
        second = await _big_run(server, cookies[i % len(cookies)], read=i % 2 == 1)
        reader, mute = (first, second) if first["read"] else (second, first)
        pairs.append((reader, mute))
    mib = 2**20
    cost_held = _median([m["rss_growth_held"] - r["rss_growth_held"] for r, m in pairs])
    cost_peak = _median([m["rss_growth_peak"] - r["rss_growth_peak"] for r, m in pairs])
    return {
        "scenario": name,
        "clients": 1,
        "repeats": repeats,
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
