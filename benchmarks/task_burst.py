"""One burst of the runs-as-tasks benchmark: ``clients`` websockets, each past its
history frame, send their first message at the same instant; each measures its time to
first token (sending ``user_message`` to the first ``text.delta``) and its tokens'
delivery. Meanwhile the deployment's processes are sampled (peak RSS; CPU seconds over
the window from the send to the last run's end) and the database is asked how many runs
are running at once; after it, how long each run's order waited for a task to claim it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from datetime import datetime, timezone
from typing import Any

import psutil

from benchmarks.client_result import ClientResult, record_frame
from benchmarks.daphne_worker import Server, open_socket, when_idle
from benchmarks.task_workers import ORDERS_TABLE, RUNS_TABLE, Deployment, cpu_seconds

SAMPLE_SECONDS = 0.05


async def _chat(
    server: Server,
    cookie: str,
    text: str,
    ready: asyncio.Queue[None],
    go: asyncio.Event,
    timeout: float,
) -> ClientResult:
    result, signalled = ClientResult(), False
    try:
        async with open_socket(server, cookie, f"bench-task-{uuid.uuid4().hex[:12]}") as ws:
            first = json.loads(await asyncio.wait_for(ws.recv(), 60))
            ready.put_nowait(None)
            signalled = True
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
    except Exception as error:  # reported, not raised
        result.error = f"{type(error).__name__}: {error}"
    if not signalled:
        ready.put_nowait(None)  # the burst waits for no client that failed to connect
    return result


async def _all_ready(ready: asyncio.Queue[None], clients: int) -> None:
    for _ in range(clients):
        await ready.get()


async def _sample(
    processes: dict[str, psutil.Process], peaks: dict[str, int], stop: asyncio.Event
) -> None:
    while not stop.is_set():
        for name, process in processes.items():
            with contextlib.suppress(psutil.Error):
                peaks[name] = max(peaks.get(name, 0), int(process.memory_info().rss))
        await asyncio.sleep(SAMPLE_SECONDS)


async def _count_running(db_name: str, peak: list[int], stop: asyncio.Event) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dbname=db_name, autocommit=True) as conn:
        while not stop.is_set():
            cursor = await conn.execute(
                f"SELECT count(*) FROM {RUNS_TABLE} WHERE status = 'running'"
            )
            row = await cursor.fetchone()
            peak[0] = max(peak[0], int(row[0]) if row else 0)
            await asyncio.sleep(SAMPLE_SECONDS * 2)


def stored(db_name: str, since: datetime) -> tuple[list[float], dict[str, int]]:
    """Seconds from each order of runs started after ``since`` to its task's claim, and
    how many of those runs the database has in each status (a run may have completed
    where its tab never heard of it)."""
    import psycopg

    with psycopg.connect(dbname=db_name) as conn:
        statuses = conn.execute(
            f"SELECT status, count(*) FROM {RUNS_TABLE} WHERE started_at >= %s GROUP BY status",
            (since,),
        ).fetchall()
        rows = conn.execute(
            f"SELECT extract(epoch FROM o.claimed_at - o.ordered_at) FROM {ORDERS_TABLE} o "
            f"JOIN {RUNS_TABLE} r ON r.id = o.run_id "
            "WHERE r.started_at >= %s AND o.claimed_at IS NOT NULL",
            (since,),
        ).fetchall()
    return [float(row[0]) for row in rows], {str(s): int(n) for s, n in statuses}


def _until_ended(db_name: str) -> float:
    """Seconds until no run of the database is running (bounded by 120)."""
    import psycopg

    began = time.monotonic()
    with psycopg.connect(dbname=db_name, autocommit=True) as conn:
        while time.monotonic() < began + 120:
            row = conn.execute(
                f"SELECT count(*) FROM {RUNS_TABLE} WHERE status IN ('running', 'waiting')"
            ).fetchone()
            if not row or not row[0]:
                break
            time.sleep(0.1)
    return round(time.monotonic() - began, 2)


def settle(deployment: Deployment, db_name: str) -> None:
    """Until no run is running, then the web worker's settle (``benchmarks.settling``:
    a full garbage collection)."""
    _until_ended(db_name)
    when_idle(deployment.server.port, "/_bench/settle/")


def pct(values: list[float], q: float) -> float | None:
    """The ``q`` quantile of seconds, in milliseconds (nearest rank)."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000, 1)


async def burst(
    deployment: Deployment,
    cookies: list[str],
    db_name: str,
    clients: int,
    tokens: int,
    delay_ms: int,
) -> dict[str, Any]:
    text = f"bench tokens={tokens} delay_ms={delay_ms} pad=0"
    timeout = 30 + 3 * tokens * delay_ms / 1000  # as the streaming benchmark's clients
    ready: asyncio.Queue[None] = asyncio.Queue()
    go, stop = asyncio.Event(), asyncio.Event()
    chats = [
        asyncio.create_task(
            _chat(deployment.server, cookies[i % len(cookies)], text, ready, go, timeout)
        )
        for i in range(clients)
    ]
    with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
        await asyncio.wait_for(_all_ready(ready, clients), 60)
    processes = deployment.processes()
    peaks: dict[str, int] = {}
    running = [0]
    samplers = [
        asyncio.create_task(_sample(processes, peaks, stop)),
        asyncio.create_task(_count_running(db_name, running, stop)),
    ]
    since = datetime.now(timezone.utc)
    cpu_before = {name: cpu_seconds(p) for name, p in processes.items()}
    began = time.perf_counter()
    go.set()
    results = await asyncio.gather(*chats)
    wall = time.perf_counter() - began
    cpu = {name: round(cpu_seconds(p) - cpu_before[name], 3) for name, p in processes.items()}
    stop.set()
    await asyncio.gather(*samplers)
    ttfts = [r.ttft for r in results if r.ttft is not None]
    delivered = sum(len(r.latencies) for r in results)
    settled = await asyncio.to_thread(_until_ended, db_name)
    waits, statuses = await asyncio.to_thread(stored, db_name, since)
    return {
        "clients": clients,
        "ttfts": [round(t, 4) for t in ttfts],
        "ttft_p50_ms": pct(ttfts, 0.5),
        "ttft_p95_ms": pct(ttfts, 0.95),
        "ttft_p99_ms": pct(ttfts, 0.99),
        "delta_p50_ms": pct([x for r in results for x in r.latencies], 0.5),
        "queue_wait_p50_ms": pct(waits, 0.5),
        "queue_wait_p95_ms": pct(waits, 0.95),
        "tokens": delivered,
        "completed": sum(r.completed for r in results),
        "stored_statuses": statuses,
        "ended_in_s": settled,
        "hung": sum(1 for r in results if not r.completed and not r.error),
        "error_count": sum(1 for r in results if r.error),
        "errors": sorted({r.error for r in results if r.error})[:5],
        "peak_running_runs": running[0],
        "cpu_s": cpu,
        "rss_peak_mib": {name: round(rss / 2**20, 1) for name, rss in peaks.items()},
        "seconds": round(wall, 2),
    }
