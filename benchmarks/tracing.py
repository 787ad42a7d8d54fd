"""What tracing costs a streaming chat: time to first token with OpenTelemetry on and off.

    python -m benchmarks.tracing [--db sqlite|postgres] [--smoke] [--rounds N] [--control]

The streaming benchmark's scenario (``50 x 200 tokens @ 20 ms``; ``--smoke``: ``5 x 20
tokens @ 5 ms``) on one daphne worker with the OpenTelemetry SDK set up as a project
would (``benchmarks.tracing_settings``: every run's spans recorded and batched to an
exporter, every metric aggregated), ``--rounds`` times with the app's telemetry on and
off (``AGENT_SESSIONS["TELEMETRY"]["ENABLED"]``, switched between rounds by
``benchmarks.tracing_switch``), the two taking turns to go first. One worker for both:
the time to first token of simultaneous chats moves by a third between two fresh
workers of the same code, more than what is measured. The target, tracing's p50 within
1.05x of without, is judged on the median of the rounds' ratios. At the end, every run
made with telemetry on must have stored its trace id.
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

from benchmarks.daphne_worker import Server, when_idle
from benchmarks.load_client import Scenario, run_scenario
from benchmarks.report import write_results
from benchmarks.sessions import RESULTS, machine
from benchmarks.streaming import Mode, _prepare_db

TARGET = 1.05
FULL = Scenario("50 x 200 tokens @ 20 ms", 50, 200, 20)
SMOKE = Scenario("5 x 20 tokens @ 5 ms", 5, 20, 5)
# One worker, with the OpenTelemetry SDK set up; "off" switches the app's telemetry off.
ON = Mode(
    "tracing on",
    False,
    (("CONN_MAX_AGE", ""), ("DJANGO_SETTINGS_MODULE", "benchmarks.tracing_settings")),
)
OFF = Mode("tracing off", False, ON.env)


def traced_runs(db: str, name: str) -> int:
    """Runs of the benchmark's database with a trace id (those run with telemetry on)."""
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


def switch(server: Server, on: bool) -> None:
    """The worker's telemetry on or off (``benchmarks.tracing_switch``), once the last
    round's runs have ended (a run records its end after its tabs learn it)."""
    when_idle(server.port, f"/_bench/telemetry/{'on' if on else 'off'}/")


async def run_rounds(
    db: str, workdir: Path, scenario: Scenario, rounds: int, control: bool = False
) -> list[dict[str, Any]]:
    """``rounds`` pairs of the scenario on one worker, telemetry off and on taking turns
    to go first. ``control``: "on" stays off too (an A/A run: the harness's own spread)."""
    name = _prepare_db(db, workdir, "tracing")
    server = Server(db, name, False)
    server.env.update(dict(ON.env))
    results: list[dict[str, Any]] = []
    try:
        cookies = server.prepare(4)
        server.start()
        for on in (False, True):  # the first run of each imports and warms up its code
            await asyncio.to_thread(switch, server, on and not control)
            await run_scenario(server, cookies, Scenario("warm-up", 1, 5, 0))
        for round_ in range(rounds):
            for mode in (OFF, ON) if round_ % 2 == 0 else (ON, OFF):
                await asyncio.to_thread(switch, server, mode is ON and not control)
                result = await run_scenario(server, cookies, scenario)
                result.update(mode=mode.label, round=round_)
                print(f"   {result}", flush=True)
                results.append(result)
        await asyncio.to_thread(switch, server, False)
    finally:
        server.stop()
    try:
        # Every run made with telemetry on (its warm-up's too) stored its trace id.
        expected = 0 if control else 1 + rounds * scenario.clients
        results.append(
            {"mode": ON.label, "traced_runs": traced_runs(db, name), "expected": expected}
        )
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
    [stored] = [r for r in results if "traced_runs" in r] or [{"traced_runs": 0, "expected": 0}]
    met = "met" if verdict["met"] else "MISSED"
    lines += [
        "",
        f"Runs made with telemetry on that stored a trace id: {stored['traced_runs']} "
        f"(expected {stored['expected']}).",
        f"{verdict['target']}: median ratio {verdict['ratio']} "
        f"(rounds: {', '.join(str(r) for r in verdict['ratios'])}; medians' ratio "
        f"{verdict['pooled_ratio']}): {met}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default=None, help="sqlite or postgres (default: as streaming)")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--rounds", type=int, default=None, help="default 40, 1 with --smoke")
    parser.add_argument("--out-dir", default=None)
    parser.add_argument(
        "--control", action="store_true", help="both workers untraced: the harness's own spread"
    )
    args = parser.parse_args(argv)
    db = args.db or ("postgres" if os.environ.get("PGHOST") else "sqlite")
    scenario = SMOKE if args.smoke else FULL
    rounds = args.rounds or (1 if args.smoke else 40)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agent-sessions-tracing-") as tmp:
        results = asyncio.run(run_rounds(db, Path(tmp), scenario, rounds, args.control))
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
