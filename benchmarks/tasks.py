"""The runs-as-tasks benchmark: time to first token and CPU per token of runs executed
inline by the web worker against runs executed as tasks (django-tasks-db's ``db_worker``,
and Celery), on PostgreSQL with the Redis channel layer.

    python -m benchmarks.tasks [--db postgres] [--smoke] [--rounds N] [--interval S]

Three deployments stay up side by side for the whole run (``task_workers``): one daphne
worker with ``RUNS = "inline"``; one daphne worker and one ``db_worker`` with ``RUNS =
"tasks"`` on the database backend; one daphne worker and one Celery worker (threads pool,
Redis broker) on the app's Celery backend. Each round runs every scenario once on each
deployment, the order rotating from round to round, each burst after the last one's
runs ended (``task_burst.settle``). A scenario is ``clients`` simultaneous first messages,
each asking the paced model (``streaming_app``) for ``tokens`` tokens ``delay_ms`` apart.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.report import write_results
from benchmarks.sessions import RESULTS, _admin, machine
from benchmarks.task_burst import burst, settle
from benchmarks.task_workers import DB_WORKER_INTERVAL, MODES, Deployment, describe
from benchmarks.tasks_report import report, summarize, targets

# (name, clients, tokens, delay_ms)
FULL = [("50 x 200 tokens @ 20 ms", 50, 200, 20), ("200 x 200 tokens @ 20 ms", 200, 200, 20)]
SMOKE = [("5 x 20 tokens @ 5 ms", 5, 20, 5)]
# Only when asked for (--scenario): a burst small enough to leave the machine's cores room.
EXTRA = [("20 x 200 tokens @ 20 ms", 20, 200, 20)]
ROUNDS = 4
USERS = 4


async def _warm(deployments: list[Deployment], cookies: list[str], db_name: str) -> None:
    """Each deployment's first runs import and connect what runs need (the SDK, the task
    worker's run host, pools); a run that does not complete means a broken deployment."""
    for deployment in deployments:
        if deployment.worker is not None and deployment.worker.poll() is not None:
            raise RuntimeError(f"{deployment.mode.label}: the task worker exited")
        for clients in (1, 10):
            result = await burst(deployment, cookies, db_name, clients, 5, 0)
            if result["completed"] != clients:
                raise RuntimeError(f"{deployment.mode.label}: warm-up runs failed: {result}")
            await asyncio.to_thread(settle, deployment, db_name)


async def _rounds(
    deployments: list[Deployment],
    cookies: list[str],
    db_name: str,
    scenarios: list[tuple[str, int, int, int]],
    rounds: int,
) -> list[dict[str, Any]]:
    await _warm(deployments, cookies, db_name)
    results = []
    for round_ in range(rounds):
        turn = round_ % len(deployments)
        for name, clients, tokens, delay_ms in scenarios:
            for deployment in (*deployments[turn:], *deployments[:turn]):
                await asyncio.to_thread(settle, deployment, db_name)
                label = deployment.mode.label
                print(f"== {name}, round {round_}: {label}", flush=True)
                result = await burst(deployment, cookies, db_name, clients, tokens, delay_ms)
                result.update(scenario=name, mode=label, round=round_)
                brief = {k: v for k, v in result.items() if k != "ttfts"}
                print(f"   {brief}", flush=True)
                results.append(result)
    return results


def run_all(
    db: str, scenarios: list[tuple[str, int, int, int]], rounds: int, interval: float
) -> list[dict[str, Any]]:
    name = f"bench_tasks_{os.getpid()}"
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    _admin(f"CREATE DATABASE {name}")
    deployments = [Deployment(mode, db, name, interval) for mode in MODES]
    try:
        cookies = deployments[0].server.prepare(USERS)  # migrates, with django_tasks_db
        for deployment in deployments:
            deployment.start()
        return asyncio.run(_rounds(deployments, cookies, name, scenarios, rounds))
    finally:
        for deployment in deployments:
            deployment.stop()
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default="postgres", help="postgres (the only one measured)")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out-dir", default=None)
    parser.add_argument("--rounds", type=int, default=None, help=f"default {ROUNDS}, 1 smoke")
    parser.add_argument(
        "--interval",
        type=float,
        default=DB_WORKER_INTERVAL,
        help="db_worker's --interval: seconds between polls of an empty queue",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        choices=[s[0] for s in FULL + SMOKE + EXTRA],
        help="only this scenario (repeatable); default every scenario of the run",
    )
    parser.add_argument(
        "--claim-ahead",
        type=int,
        default=None,
        help="the task workers' RUNS_CLAIM_AHEAD (default: the app's; 0: one task per run)",
    )
    parser.add_argument(
        "--layer",
        choices=["core", "pubsub"],
        default="core",
        help="channels_redis's layer every process uses: core (the default) or pubsub",
    )
    args = parser.parse_args(argv)
    if args.layer == "pubsub":  # read by the example's settings in each process
        os.environ["CHANNEL_LAYER"] = "pubsub"
    if args.claim_ahead is not None:  # read by benchmarks.tasks_settings in each worker
        os.environ["BENCH_CLAIM_AHEAD"] = str(args.claim_ahead)
    # Terminated, it still stops the servers it started (run_all's finally).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.db != "postgres":
        parser.error("the runs-as-tasks benchmark measures PostgreSQL only")
    if not os.environ.get("REDIS_URL"):
        parser.error("REDIS_URL is not set: the channel layer and Celery's broker need Redis")
    scenarios = SMOKE if args.smoke else FULL
    if args.scenario:
        scenarios = [s for s in FULL + SMOKE + EXTRA if s[0] in args.scenario]
    rounds = args.rounds or (1 if args.smoke else ROUNDS)
    started = time.perf_counter()
    results = run_all(args.db, scenarios, rounds, args.interval)
    rows = summarize(results, [s[0] for s in scenarios], [m.label for m in MODES])
    checks = targets(rows)
    setup = describe(args.interval, args.claim_ahead, args.layer)
    markdown = report(rows, checks, setup)
    print("\n" + markdown)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%SZ")
    document = {
        "benchmark": "tasks",
        "date": stamp,
        "db": args.db,
        "smoke": args.smoke,
        "rounds": rounds,
        "machine": machine([args.db]),
        "task_workers": setup,
        "seconds": round(time.perf_counter() - started, 1),
        "summary": rows,
        "targets": checks,
        "results": results,
    }
    out_dir = Path(args.out_dir) if args.out_dir else RESULTS
    heading = f"Runs-as-tasks benchmark on {args.db}"
    write_results(out_dir, "tasks", stamp, document, heading, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
