"""What titles cost a chat's next message: time to first token with titles on and off.

    python -m benchmarks.titles [--db sqlite|postgres] [--smoke] [--rounds N] [--clients N]
                                [--control]

One worker of the streaming benchmark (``benchmarks.titles_settings``), its
``AGENT_SESSIONS["TITLES"]`` switched between bursts (``benchmarks.titles_switch``):
``None`` (off) and the benchmark's title function (on: ``streaming_app.write_title``, a
model-like wait of ``BENCH_TITLE_MS``, 400 ms). One worker, not two deployments: two
workers of the same code differed by up to 1.2x at 200 chats. In each
burst (``titles_client``), N chats send their first message at once and, the moment its
reply completes, their second: a conversation is titled right then, so the second
message's time to first token is where titling could be in the way. Scenarios: 50 and 200
chats x 200 tokens @ 20 ms (``--smoke``: 5 x 20 @ 5 ms). ``--rounds`` paired rounds (6 by
default), off and on taking turns to go first, each burst after the worker settled
(``benchmarks.settling``: runs ended, titles written, garbage collected).

Judged: the median over the rounds of each round's on/off ratio of the second message's
TTFT p50 and p99, target at most 1.02. A round is valid only if every chat completed both
messages and every conversation of "on" got the model's title (``title_source`` "model")
and none of "off" did; invalid rounds are reported and left out of the medians.
``--clients 50`` runs one scenario; ``--control`` keeps titles off in both modes (an A/A
run: the harness's own spread, which the 1.02 is judged against).
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from benchmarks.load_client import Scenario
from benchmarks.report import write_results
from benchmarks.sessions import RESULTS, machine
from benchmarks.streaming import _prepare_db
from benchmarks.titles_client import burst

TARGET = 1.02
ROUNDS = 6
FULL = [
    Scenario("50 x 200 tokens @ 20 ms", 50, 200, 20),
    Scenario("200 x 200 tokens @ 20 ms", 200, 200, 20),
]
SMOKE = [Scenario("5 x 20 tokens @ 5 ms", 5, 20, 5)]
OFF, ON = "titles off", "titles on"
_KEYS = ("ttft_p50_ms", "ttft_p99_ms")
_COUNT = (
    "import collections, json, django; django.setup();"
    "from django_agent_sessions.models import AgentSession;"
    "rows = AgentSession.objects.filter(session_id__startswith='titles-')"
    ".values_list('session_id', 'title_source');"
    "seen = collections.Counter(); titled = collections.Counter();"
    "[seen.update([s.rsplit('-', 1)[0]]) for s, _ in rows];"
    "[titled.update([s.rsplit('-', 1)[0]]) for s, t in rows if t == 'model'];"
    "print(json.dumps({k: [seen[k], titled[k]] for k in seen}))"
)


def _prefix(scenario: int, round_: int, label: str) -> str:
    return f"titles-s{scenario}r{round_}{label.split()[-1]}-"


def switch(server: Server, on: bool) -> None:
    """The worker's titles on or off (``benchmarks.titles_switch``), once the last
    round's runs have ended and their titles were written, the worker settled."""
    when_idle(server.port, f"/_bench/titles/{'on' if on else 'off'}/")


def counts(server: Server) -> dict[str, list[int]]:
    """Per round's prefix: the conversations, and those titled by the model."""
    out = subprocess.run(
        [sys.executable, "-c", _COUNT], env=server.env, capture_output=True, text=True, timeout=120
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return dict(json.loads(out.stdout))


async def run_rounds(
    db: str, workdir: Path, scenarios: list[Scenario], rounds: int, control: bool = False
) -> list[dict[str, Any]]:
    """``rounds`` paired rounds of each scenario on one worker, titles off and on taking
    turns to go first (see the module). ``control``: "on" has titles off too (an A/A
    run: the harness's own spread)."""
    name = _prepare_db(db, workdir, "titles")
    server = Server(db, name, False)
    server.env.update(CONN_MAX_AGE="", DJANGO_SETTINGS_MODULE="benchmarks.titles_settings")
    results: list[dict[str, Any]] = []
    try:
        cookies = server.prepare(4)
        server.start()
        for on in (False, True):  # the first run of each imports and warms up its code
            await asyncio.to_thread(switch, server, on and not control)
            await burst(server, cookies, Scenario("warm-up", 1, 5, 0), f"warm-up-{on}-")
        for index, scenario in enumerate(scenarios):
            for round_ in range(rounds):
                for label in (OFF, ON) if round_ % 2 == 0 else (ON, OFF):
                    await asyncio.to_thread(switch, server, label == ON and not control)
                    print(f"== {scenario.name}, round {round_}: {label}", flush=True)
                    prefix = _prefix(index, round_, label)
                    result = await burst(server, cookies, scenario, prefix)
                    result.update(mode=label, round=round_, prefix=prefix)
                    print(f"   {result}", flush=True)
                    results.append(result)
        await asyncio.to_thread(switch, server, False)  # the last titles written
        stored = counts(server)
    finally:
        server.stop()
        if db == "postgres":
            from benchmarks.sessions import _admin

            _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    for result in results:
        total, titled = stored.get(result["prefix"].rstrip("-"), [0, 0])
        clients = result["clients"]
        completed = result["first"]["completed"] == result["second"]["completed"] == clients
        wanted = clients if result["mode"] == ON and not control else 0
        result.update(conversations=total, titled=titled)
        result["valid"] = completed and total == clients and titled == wanted
    return results


def judge(results: list[dict[str, Any]], scenario: str) -> dict[str, Any]:
    """Each valid round's on/off ratios of the second message's TTFT p50 and p99, their
    medians, and the target."""
    by_round: dict[int, dict[str, dict[str, Any]]] = {}
    for result in results:
        if result["scenario"] == scenario:
            by_round.setdefault(result["round"], {})[result["mode"]] = result
    ratios: list[dict[str, float | None]] = []
    invalid: list[int] = []
    for round_, pair in sorted(by_round.items()):
        if len(pair) != 2 or not all(r["valid"] for r in pair.values()):
            invalid.append(round_)
            continue
        ratios.append(
            {
                f"{message}_{key}": _ratio(pair[ON][message][key], pair[OFF][message][key])
                for message in ("first", "second")
                for key in _KEYS
            }
        )
    medians: dict[str, float | None] = {}
    for key in ratios[0] if ratios else ():
        known = [ratio for r in ratios if (ratio := r[key]) is not None]
        medians[key] = round(statistics.median(known), 3) if len(known) == len(ratios) else None
    judged = [medians.get(f"second_{key}") for key in _KEYS]
    return {
        "scenario": scenario,
        "target": f"second message's TTFT p50 and p99 with titles within {TARGET}x of without",
        "ratios": ratios,
        "medians": medians,  # the first message's are reported, the second's judged
        "ratio_p50": judged[0],
        "ratio_p99": judged[1],
        "invalid_rounds": invalid,
        "met": bool(ratios) and all(m is not None and m <= TARGET for m in judged),
    }


def _ratio(on: float | None, off: float | None) -> float | None:
    return round(on / off, 3) if on and off else None


def report(results: list[dict[str, Any]], verdicts: list[dict[str, Any]]) -> str:
    lines = [
        "### Titles: time to first token with titles on and off",
        "",
        "| scenario | round | mode | 1st TTFT p50 | 1st p99 | 2nd TTFT p50 | 2nd p99 | "
        "completed | titled | valid |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        first, second = r["first"], r["second"]
        lines.append(
            f"| {r['scenario']} | {r['round']} | {r['mode']} | {first['ttft_p50_ms']} | "
            f"{first['ttft_p99_ms']} | {second['ttft_p50_ms']} | {second['ttft_p99_ms']} | "
            f"{first['completed']}+{second['completed']}/{2 * r['clients']} | "
            f"{r['titled']}/{r['conversations']} | {'yes' if r['valid'] else '**no**'} |"
        )
    lines.append("")
    for v in verdicts:
        rounds = ", ".join(
            f"{r['second_ttft_p50_ms']}/{r['second_ttft_p99_ms']}" for r in v["ratios"]
        )
        first = v["medians"]
        met = "met" if v["met"] else "MISSED"
        invalid = f"; invalid rounds: {v['invalid_rounds']}" if v["invalid_rounds"] else ""
        lines.append(
            f"{v['scenario']}: {v['target']}: median ratio p50 {v['ratio_p50']}, "
            f"p99 {v['ratio_p99']} (rounds p50/p99: {rounds}{invalid}): {met}; "
            f"the first message's, for comparison: p50 {first.get('first_ttft_p50_ms')}, "
            f"p99 {first.get('first_ttft_p99_ms')}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default=None, help="sqlite or postgres (default: as streaming)")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument(
        "--rounds", type=int, default=None, help=f"default {ROUNDS}, 1 with --smoke"
    )
    parser.add_argument("--clients", type=int, default=None, help="one scenario of N chats")
    parser.add_argument("--out-dir", default=None)
    parser.add_argument(
        "--control", action="store_true", help="titles off on both workers: their own spread"
    )
    args = parser.parse_args(argv)
    db = args.db or ("postgres" if os.environ.get("PGHOST") else "sqlite")
    scenarios = SMOKE if args.smoke else FULL
    if args.clients:
        scenarios = [s for s in scenarios if s.clients == args.clients] or scenarios
    rounds = args.rounds or (1 if args.smoke else ROUNDS)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agent-sessions-titles-") as tmp:
        results = asyncio.run(run_rounds(db, Path(tmp), scenarios, rounds, args.control))
    verdicts = [judge(results, s.name) for s in scenarios]
    markdown = report(results, verdicts)
    print("\n" + markdown, flush=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%SZ")
    document = {
        "benchmark": "titles",
        "date": stamp,
        "db": db,
        "smoke": args.smoke,
        "control": args.control,
        "rounds": rounds,
        "title_ms": int(os.environ.get("BENCH_TITLE_MS", "400")),
        "machine": machine([db]),
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
        "targets": verdicts,
    }
    out_dir = Path(args.out_dir) if args.out_dir else RESULTS
    kind = f"titles-{db}" + ("-control" if args.control else "")
    write_results(out_dir, kind, stamp, document, f"Titles benchmark on {db}", markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
