"""The streaming benchmark: websocket and SSE load clients against daphne serving the example.

    python -m benchmarks.streaming [--db sqlite|postgres] [--smoke] [--out-dir DIR]

For each mode (with DjangoSession, the session-less baseline, and the chat over Server-Sent
Events with POSTs: ``sse_client``) it starts one daphne
worker on 127.0.0.1, signs in benchmark users, and drives bounded scenarios through
``ws/agent-sessions/<id>/`` with the paced model of ``streaming_app``. It measures time to
first token, per-token delivery latency, frames/s, the worker's RSS, and errors and hung
clients. Every scenario is bounded in clients, tokens and seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks import transport_compare
from benchmarks.daphne_worker import Server
from benchmarks.load_client import Scenario, run_scenario
from benchmarks.report import write_results
from benchmarks.sessions import RESULTS, machine
from benchmarks.streaming_targets import (
    LOADED,
    LOADED_REFERENCE,
    NON_READER_COST,
    READER_CONTROL,
    SMOKE_LOADED,
    SMOKE_READER_CONTROL,
    report,
    targets,
)

FULL = [
    Scenario("200 idle sockets", 200, 0, 0, idle_only=True, baseline_too=False),
    Scenario("1 x 2000 tokens, unpaced", 1, 2000, 0),
    Scenario("50 x 200 tokens @ 20 ms", 50, 200, 20),
    Scenario("200 x 200 tokens @ 20 ms", 200, 200, 20),
    Scenario(LOADED, 200, 200, 20, idle_too=1000, baseline_too=False),
    # The reference for the next one: the same 20 chats without the non-reader.
    Scenario("20 x 200 tokens @ 20 ms", 20, 200, 20, baseline_too=False),
    Scenario(
        "20 x 200 @ 20 ms + 1 client that never reads",
        20,
        200,
        20,
        non_reader=True,
        baseline_too=False,
    ),
    # The non-reader's control: the same full-pace run, read.
    Scenario(READER_CONTROL, 20, 200, 20, full_pace_reader=True, baseline_too=False),
    Scenario(NON_READER_COST, 1, 0, 0, non_reader_cost=True, baseline_too=False, repeats=3),
]
SMOKE = [
    Scenario("1 x 100 tokens, unpaced", 1, 100, 0),
    Scenario("5 x 20 tokens @ 5 ms", 5, 20, 5),
    Scenario(
        "3 x 20 @ 5 ms + 1 client that never reads", 3, 20, 5, non_reader=True, baseline_too=False
    ),
    Scenario(SMOKE_READER_CONTROL, 3, 20, 5, full_pace_reader=True, baseline_too=False),
    Scenario("10 idle sockets", 10, 0, 0, idle_only=True, baseline_too=False),
    Scenario(SMOKE_LOADED, 5, 20, 5, idle_too=20, baseline_too=False),
    Scenario(NON_READER_COST, 1, 0, 0, non_reader_cost=True, baseline_too=False, repeats=1),
]


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
    # Production's channel layer (Redis at REDIS_URL) instead of the in-memory one, which
    # scans every channel and group on each message (channels' development layer).
    redis: bool = False
    # The chat over Server-Sent Events and POSTs instead of websockets (same worker).
    sse: bool = False

    @property
    def transport(self) -> str:
        return "sse" if self.sse else "websocket"


# The defaults run the example project's database settings as they are (persistent
# connections, health checks); an empty CONN_MAX_AGE keeps the example's default even if
# the caller's environment sets one. The variants show what closing each connection
# after use costs, for information.
_EXAMPLE = (("CONN_MAX_AGE", ""),)
_CLOSING = (("CONN_MAX_AGE", "0"),)
MODES = [
    Mode("sessions", False, _EXAMPLE),
    Mode("baseline", True, _EXAMPLE),
    Mode("sessions, SSE", False, (*_EXAMPLE, ("CHAT_TRANSPORT", "sse")), sse=True),
    Mode("sessions, Redis layer", False, (*_EXAMPLE, ("BENCH_CHANNEL_LAYER", "redis")), redis=True),
    Mode("sessions, CONN_MAX_AGE=0", False, _CLOSING, True),
    Mode("baseline, CONN_MAX_AGE=0", True, _CLOSING, True),
]


async def run_mode(
    db: str,
    name: str,
    cookies: list[str],
    mode: Mode,
    scenarios: list[Scenario],
) -> list[dict[str, Any]]:
    """``scenarios`` on a fresh worker."""
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
            result = await run_scenario(server, cookies, scenario, mode.transport)
            result["mode"] = label
            print(f"   {result}", flush=True)
            results.append(result)
    finally:
        server.stop()
    return results


def _runs_in(scenario: Scenario, mode: Mode) -> bool:
    if mode.sse:  # the chats compared with the websocket's, and idle streams' memory
        compared = (*transport_compare.COMPARED, *transport_compare.SMOKE_COMPARED)
        return scenario.idle_only or scenario.name in compared
    if mode.redis:  # the loaded worker, and its reference without the idle sockets
        return scenario.name in (LOADED, SMOKE_LOADED, *LOADED_REFERENCE.values())
    if scenario.idle_too:  # the in-memory layer's scans would measure only themselves
        return False
    return not mode.variant or (scenario.baseline_too and scenario.clients > 1)


def _sse_rounds(
    db: str, name: str, cookies: list[str], sse: Mode, chosen: list[Scenario], rounds: int
) -> list[dict[str, Any]]:
    """The SSE mode: its idle streams on a worker of their own, then the compared
    scenarios in ``rounds`` rounds of the websocket, SSE and the floor view on one worker
    (``transport_compare``)."""
    idle = [s for s in chosen if s.idle_only]
    compared = [s for s in chosen if not s.idle_only]
    results = asyncio.run(run_mode(db, name, cookies, sse, idle)) if idle else []
    if compared:
        results += asyncio.run(_one_worker_rounds(db, name, cookies, sse, compared, rounds))
    return results


async def _one_worker_rounds(
    db: str, name: str, cookies: list[str], sse: Mode, compared: list[Scenario], rounds: int
) -> list[dict[str, Any]]:
    server = Server(db, name, False)
    server.env.update(dict(sse.env))
    server.start()
    try:
        return await transport_compare.paired_rounds(server, cookies, compared, rounds)
    finally:
        server.stop()


def run_all(
    db: str,
    workdir: Path,
    scenarios: list[Scenario],
    variants: bool,
    modes: str = "",
    rounds: int = transport_compare.ROUNDS,
) -> list[dict[str, Any]]:
    """Both modes on one prepared database (their conversations never overlap)."""
    name = _prepare_db(db, workdir, "run")
    try:
        cookies = Server(db, name, False).prepare(4)
        results = []
        for mode in MODES if variants else MODES[:4]:
            if modes and mode.label not in modes.split(";"):
                continue
            if mode.redis and not os.environ.get("REDIS_URL"):
                print(f"== {mode.label}: skipped, REDIS_URL is not set", flush=True)
                continue
            chosen = [s for s in scenarios if _runs_in(s, mode)]
            if mode.sse:
                results += _sse_rounds(db, name, cookies, mode, chosen, rounds)
            elif chosen:
                results += asyncio.run(run_mode(db, name, cookies, mode, chosen))
        return results
    finally:
        if db == "postgres":
            from benchmarks.sessions import _admin

            _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


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
    parser.add_argument(
        "--mode",
        default="",
        help='only these modes, separated by ";" (e.g. "sessions;baseline, CONN_MAX_AGE=0")',
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help=f"rounds of the websocket, SSE and the floor view per compared scenario (default "
        f"{transport_compare.ROUNDS}, 1 with --smoke)",
    )
    args = parser.parse_args(argv)
    db = args.db or ("postgres" if os.environ.get("PGHOST") else "sqlite")
    scenarios = [s for s in (SMOKE if args.smoke else FULL) if args.scenario in s.name]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agent-sessions-stream-") as tmp:
        rounds = args.rounds or (1 if args.smoke else transport_compare.ROUNDS)
        results = run_all(db, Path(tmp), scenarios, not args.smoke, args.mode, rounds)
    checks = targets(results, args.smoke)
    markdown = report(results, checks)
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
    heading = f"Streaming benchmark on {db}"
    write_results(out_dir, "streaming", stamp, document, heading, markdown)
    # Hung clients and error frames are results (see the targets), not a failed benchmark.
    return 0


if __name__ == "__main__":
    sys.exit(main())
