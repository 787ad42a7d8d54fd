"""What tracing costs a streaming chat: time to first token with OpenTelemetry on and off.

    python -m benchmarks.tracing [--db sqlite|postgres] [--smoke] [--rounds N] [--out-dir DIR]

The streaming benchmark's scenario (``50 x 200 tokens @ 20 ms``; ``--smoke``: ``5 x 20
tokens @ 5 ms``) on a fresh daphne worker without a tracer provider (the app's
telemetry calls reach the API's no-ops: the baseline) and on one with the OpenTelemetry
SDK set up as a project would (``benchmarks.tracing_settings``: every run's spans
recorded and batched to an exporter, every metric aggregated), in ``--rounds`` rounds,
the two taking turns to go first. The time to first token of simultaneous chats moves
by a third between two workers of the same code (``transport_compare``), so the target,
tracing's p50 within 1.05x of the baseline's, is judged on the median of the rounds'
ratios. Each round checks that the traced worker stored a trace id on its runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.daphne_worker import Server
from benchmarks.load_client import Scenario
from benchmarks.report import write_results
from benchmarks.sessions import RESULTS, machine
from benchmarks.streaming import Mode, _prepare_db, run_mode

TARGET = 1.05
FULL = Scenario("50 x 200 tokens @ 20 ms", 50, 200, 20)
SMOKE = Scenario("5 x 20 tokens @ 5 ms", 5, 20, 5)
OFF = Mode("tracing off", False, (("CONN_MAX_AGE", ""),))
ON = Mode(
    "tracing on",
    False,
    (("CONN_MAX_AGE", ""), ("DJANGO_SETTINGS_MODULE", "benchmarks.tracing_settings")),
)


def traced_runs(db: str, name: str) -> int:
    """Runs of the benchmark's database with a trace id (the traced workers')."""
    server = Server(db, name, False)
    code = (
        "import django; django.setup();"
        "from django_agent_sessions.models import AgentRun;"
        "print(AgentRun.objects.exclude(trace_id='').count())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=server.env, capture_output=True, text=True, timeout=60
    )
    return int(out.stdout.strip() or 0)


def run_rounds(
    db: str, workdir: Path, scenario: Scenario, rounds: int, control: bool = False
) -> list[dict[str, Any]]:
    """``control``: the "tracing on" workers run untraced too (an A/A run: the spread of
    two workers of the same code on this machine)."""
    on = Mode(ON.label, False, OFF.env) if control else ON
    name = _prepare_db(db, workdir, "tracing")
    try:
        cookies = Server(db, name, False).prepare(4)
        results = []
        for round_ in range(rounds):
            for mode in (OFF, on) if round_ % 2 == 0 else (on, OFF):
                results += asyncio.run(run_mode(db, name, cookies, mode, [scenario], round_=round_))
        # Every run of the traced workers (their warm-up's too) stored its trace id.
        results.append({"mode": ON.label, "traced_runs": traced_runs(db, name)})
        return results
    finally:
        if db == "postgres":
            from benchmarks.sessions import _admin

            _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def judge(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each round's traced/untraced TTFT p50 ratio, their median, and the target."""
    rounds: dict[int, dict[str, dict[str, Any]]] = {}
    for result in results:
        if "round" in result:
            rounds.setdefault(result["round"], {})[result["mode"]] = result
    ratios = [
        pair[ON.label]["ttft_p50_ms"] / pair[OFF.label]["ttft_p50_ms"]
        for pair in rounds.values()
        if pair.get(OFF.label, {}).get("ttft_p50_ms") and pair.get(ON.label, {}).get("ttft_p50_ms")
    ]
    median = statistics.median(ratios) if ratios else None
    p50s = {
        mode.label: [r["ttft_p50_ms"] for r in results if r["mode"] == mode.label and "round" in r]
        for mode in (OFF, ON)
    }
    pooled = (
        statistics.median(p50s[ON.label]) / statistics.median(p50s[OFF.label])
        if all(p50s.values())
        else None
    )
    return {
        "target": f"TTFT p50 with tracing within {TARGET}x of without",
        "ratios": [round(r, 3) for r in ratios],
        "ratio": round(median, 3) if median is not None else None,
        # The median p50 with tracing over the median without, beside the rounds' median.
        "pooled_ratio": round(pooled, 3) if pooled is not None else None,
        "met": median is not None and median <= TARGET,
    }


def report(scenario: Scenario, results: list[dict[str, Any]], verdict: dict[str, Any]) -> str:
    lines = [
        f"### Tracing overhead: {scenario.name}",
        "",
        "| round | mode | TTFT p50 ms | TTFT p99 ms | completed |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        if "round" in r:
            lines.append(
                f"| {r['round']} | {r['mode']} | {r['ttft_p50_ms']} | {r['ttft_p99_ms']} | "
                f"{r['completed']}/{r['clients']} |"
            )
    traced = [r["traced_runs"] for r in results if "traced_runs" in r]
    met = "met" if verdict["met"] else "MISSED"
    lines += [
        "",
        f"Runs of the traced workers with a trace id stored: {traced[0] if traced else 0}.",
        f"{verdict['target']}: median ratio {verdict['ratio']} "
        f"(rounds: {', '.join(str(r) for r in verdict['ratios'])}; medians' ratio "
        f"{verdict['pooled_ratio']}): {met}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default=None, help="sqlite or postgres (default: as streaming)")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--rounds", type=int, default=None, help="default 6, 1 with --smoke")
    parser.add_argument("--out-dir", default=None)
    parser.add_argument(
        "--control", action="store_true", help="both workers untraced: the harness's own spread"
    )
    args = parser.parse_args(argv)
    db = args.db or ("postgres" if os.environ.get("PGHOST") else "sqlite")
    scenario = SMOKE if args.smoke else FULL
    rounds = args.rounds or (1 if args.smoke else 6)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agent-sessions-tracing-") as tmp:
        results = run_rounds(db, Path(tmp), scenario, rounds, args.control)
    verdict = judge(results)
    markdown = report(scenario, results, verdict)
    print("\n" + markdown, flush=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%SZ")
    document = {
        "benchmark": "tracing",
        "date": stamp,
        "db": db,
        "smoke": args.smoke,
        "control": args.control,
        "machine": machine([db]),
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
        "targets": [verdict],
    }
    out_dir = Path(args.out_dir) if args.out_dir else RESULTS
    kind = f"tracing-{db}" + ("-control" if args.control else "")
    write_results(out_dir, kind, stamp, document, f"Tracing benchmark on {db}", markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
