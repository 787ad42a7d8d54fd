"""The streaming benchmark: a websocket load client against daphne serving the example project.

    python -m benchmarks.streaming [--db sqlite|postgres] [--smoke] [--out-dir DIR]

For each mode (with DjangoSession, and the session-less baseline) it starts one daphne
worker on 127.0.0.1, signs in benchmark users, and drives bounded scenarios through
``ws/agent-sessions/<id>/`` with the paced model of ``streaming_app``. It measures time to
first token, per-token delivery latency, frames/s, the worker's RSS, and errors and hung
clients. Every scenario is bounded in clients, tokens and seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psutil
from websockets.asyncio.client import connect

from benchmarks.sessions import RESULTS, machine

ROOT = Path(__file__).resolve().parent.parent
MAX_RUN_BYTES = 2 * 1024 * 1024  # the app's default AGENT_SESSIONS["MAX_RUN_BYTES"]


@dataclass
class Scenario:
    name: str
    clients: int
    tokens: int
    delay_ms: int
    pad: int = 0
    non_reader: bool = False
    idle_only: bool = False
    baseline_too: bool = True


# Idle sockets first: RSS growth after a heavy scenario is hidden by memory it freed.
FULL = [
    Scenario("200 idle sockets", 200, 0, 0, idle_only=True, baseline_too=False),
    Scenario("1 x 2000 tokens, unpaced", 1, 2000, 0),
    Scenario("50 x 200 tokens @ 20 ms", 50, 200, 20),
    Scenario("200 x 200 tokens @ 20 ms", 200, 200, 20),
    Scenario(
        "20 x 200 @ 20 ms + 1 client that never reads",
        20,
        200,
        20,
        non_reader=True,
        baseline_too=False,
    ),
]
SMOKE = [
    Scenario("1 x 100 tokens, unpaced", 1, 100, 0),
    Scenario("5 x 20 tokens @ 5 ms", 5, 20, 5),
    Scenario(
        "3 x 20 @ 5 ms + 1 client that never reads", 3, 20, 5, non_reader=True, baseline_too=False
    ),
    Scenario("10 idle sockets", 10, 0, 0, idle_only=True, baseline_too=False),
]


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
                    return result
                elif kind in ("run.failed", "run.cancelled", "error"):
                    result.error = f"{kind}: {frame.get('error') or frame.get('code')}"
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
    async with _open(
        server, cookie, f"bench-mute-{uuid.uuid4().hex[:8]}", sock=sock, max_queue=1
    ) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "user_message", "text": text}))
        await asyncio.sleep(seconds)


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000, 1)


async def _sample_rss(server: Server, peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], server.rss())
        await asyncio.sleep(0.05)


async def run_scenario(server: Server, cookies: list[str], s: Scenario) -> dict[str, Any]:
    before = server.rss()
    if s.idle_only:
        return await _idle(server, cookies, s, before)
    peak, stop = [before], asyncio.Event()
    sampler = asyncio.create_task(_sample_rss(server, peak, stop))
    text = f"bench tokens={s.tokens} delay_ms={s.delay_ms} pad={s.pad}"
    expected = s.tokens * s.delay_ms / 1000
    timeout = 30 + expected * 3
    go = asyncio.Event()
    clients = [
        asyncio.create_task(chat(server, cookies[i % len(cookies)], text, go, timeout))
        for i in range(s.clients)
    ]
    mute = None
    if s.non_reader:
        # 50 000 tokens of ~200 bytes: far past the per-run byte cap.
        mute = asyncio.create_task(
            non_reader(server, cookies[-1], "bench tokens=50000 delay_ms=0 pad=190", expected + 2)
        )
    await asyncio.sleep(0.5)  # let every socket connect and get its history first
    started = time.perf_counter()
    go.set()
    results = await asyncio.gather(*clients)
    wall = time.perf_counter() - started
    if mute is not None:
        await mute
    stop.set()
    await sampler
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
        "rss_before_mib": round(before / 2**20, 1),
        "rss_peak_mib": round(peak[0] / 2**20, 1),
        "rss_growth_mib": round((peak[0] - before) / 2**20, 1),
        "seconds": round(wall, 2),
    }


async def _idle(server: Server, cookies: list[str], s: Scenario, before: int) -> dict[str, Any]:
    sockets = []
    try:
        for i in range(s.clients):
            ws = await _open(
                server, cookies[i % len(cookies)], f"bench-idle-{uuid.uuid4().hex[:8]}"
            )
            await ws.recv()
            sockets.append(ws)
        await asyncio.sleep(1)
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


def _prepare_db(db: str, workdir: Path, label: str) -> str:
    if db == "sqlite":
        return str(workdir / f"streaming-{label}.sqlite3")
    from benchmarks.sessions import _admin

    name = f"bench_streaming_{label}_{os.getpid()}"
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    _admin(f"CREATE DATABASE {name}")
    return name


@dataclass(frozen=True)
class Mode:
    label: str
    no_session: bool
    env: tuple[tuple[str, str], ...] = ()
    # Variants run only the scenarios that compare time to first token.
    variant: bool = False


MODES = [
    Mode("sessions", False),
    Mode("baseline", True),
    # The example project closes connections after each use (CONN_MAX_AGE=0); these
    # show what persistent connections change.
    Mode("sessions, CONN_MAX_AGE=None", False, (("BENCH_CONN_MAX_AGE", "none"),), True),
    Mode("baseline, CONN_MAX_AGE=None", True, (("BENCH_CONN_MAX_AGE", "none"),), True),
]


async def run_mode(
    db: str, name: str, cookies: list[str], mode: Mode, scenarios: list[Scenario]
) -> list[dict[str, Any]]:
    label, no_session = mode.label, mode.no_session
    server = Server(db, name, no_session)
    server.env.update(dict(mode.env))
    server.start()
    results = []
    try:
        # One unmeasured run first: the worker's first run imports and warms up the SDK.
        await run_scenario(server, cookies, Scenario("warm-up", 1, 5, 0))
        for scenario in scenarios:
            if no_session and not scenario.baseline_too:
                continue
            print(f"== streaming on {db}, {label}: {scenario.name}", flush=True)
            result = await run_scenario(server, cookies, scenario)
            result["mode"] = label
            print(f"   {result}", flush=True)
            results.append(result)
    finally:
        server.stop()
    return results


def run_all(
    db: str, workdir: Path, scenarios: list[Scenario], variants: bool
) -> list[dict[str, Any]]:
    """Both modes on one prepared database (their conversations never overlap)."""
    name = _prepare_db(db, workdir, "run")
    try:
        cookies = Server(db, name, False).prepare(4)
        results = []
        for mode in MODES if variants else MODES[:2]:
            chosen = [
                s for s in scenarios if not mode.variant or (s.baseline_too and s.clients > 1)
            ]
            if chosen:
                results += asyncio.run(run_mode(db, name, cookies, mode, chosen))
        return results
    finally:
        if db == "postgres":
            from benchmarks.sessions import _admin

            _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| mode | scenario | TTFT p50 / p99 ms | token delivery p50 / p99 ms | frames/s | "
        "completed / hung / errors | worker RSS MiB (peak growth) |",
        "|---|---|---:|---:|---:|---|---:|",
    ]
    for r in results:
        if "kib_per_socket" in r:
            lines.append(
                f"| {r['mode']} | {r['scenario']} | | | | {r['open']} open | "
                f"{r['rss_after_mib']} ({r['kib_per_socket']} KiB per socket) |"
            )
            continue
        lines.append(
            f"| {r['mode']} | {r['scenario']} | {r['ttft_p50_ms']} / {r['ttft_p99_ms']} | "
            f"{r['delta_p50_ms']} / {r['delta_p99_ms']} | {r['frames_per_s']} | "
            f"{r['completed']} / {r['hung']} / {r['error_count']} | "
            f"{r['rss_peak_mib']} (+{r['rss_growth_mib']}) |"
        )
    return "\n".join(lines)


def targets(results: list[dict[str, Any]], smoke: bool) -> list[dict[str, Any]]:
    checks = []
    burst = "5 x 20 tokens @ 5 ms" if smoke else "200 x 200 tokens @ 20 ms"
    pair = {r["mode"]: r for r in results if r["scenario"] == burst}
    for suffix in ("", ", CONN_MAX_AGE=None"):
        ours_mode, base_mode = f"sessions{suffix}", f"baseline{suffix}"
        if ours_mode in pair and base_mode in pair:
            ours, base = pair[ours_mode]["ttft_p99_ms"], pair[base_mode]["ttft_p99_ms"]
            errors = pair[ours_mode]["error_count"] + pair[base_mode]["error_count"]
            checks.append(
                {
                    "target": f"TTFT p99 {ours_mode} within 1.5x of {base_mode} ({burst})",
                    "sessions_ms": ours,
                    "baseline_ms": base,
                    "client_errors": errors,
                    "met": bool(ours and base and ours <= 1.5 * base and not errors),
                }
            )
    hung = sum(r.get("hung", 0) for r in results)
    checks.append({"target": "zero hung clients", "hung": hung, "met": hung == 0})
    for r in results:
        if "never reads" in r["scenario"]:
            growth = r["rss_growth_mib"] * 2**20
            checks.append(
                {
                    "target": "a non-reading client costs at most the per-run byte cap",
                    "rss_growth_mib": r["rss_growth_mib"],
                    "cap_mib": MAX_RUN_BYTES / 2**20,
                    "met": growth <= MAX_RUN_BYTES,
                }
            )
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--db",
        default=None,
        help="sqlite or postgres (default: postgres when PGHOST is set, else sqlite)",
    )
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out-dir", default=None)
    parser.add_argument("--scenario", default="", help="only scenarios whose name has this")
    args = parser.parse_args(argv)
    db = args.db or ("postgres" if os.environ.get("PGHOST") else "sqlite")
    scenarios = [s for s in (SMOKE if args.smoke else FULL) if args.scenario in s.name]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agent-sessions-stream-") as tmp:
        results = run_all(db, Path(tmp), scenarios, variants=not args.smoke)
    checks = targets(results, args.smoke)
    markdown = (
        table(results)
        + "\n\n"
        + "\n".join(
            f"- {c['target']}: {'met' if c['met'] else 'NOT met'} "
            f"({', '.join(f'{k}={v}' for k, v in c.items() if k not in ('target', 'met'))})"
            for c in checks
        )
    )
    print("\n" + markdown)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%SZ")
    document = {
        "benchmark": "streaming",
        "date": stamp,
        "db": db,
        "smoke": args.smoke,
        "machine": machine([db]),
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
        "targets": checks,
    }
    out_dir = Path(args.out_dir) if args.out_dir else RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"streaming-{stamp}.json").write_text(json.dumps(document, indent=1))
    (out_dir / "streaming-latest.json").write_text(json.dumps(document, indent=1))
    (out_dir / "streaming-latest.md").write_text(
        f"Streaming benchmark on {db}, {stamp}, {json.dumps(document['machine'])}\n\n{markdown}\n"
    )
    # Hung clients and error frames are results (see the targets), not a failed benchmark.
    return 0


if __name__ == "__main__":
    sys.exit(main())
