"""Interleaved parity measurement: DjangoSession against the SDK's SQLiteSession.

    python -m benchmarks.parity [--db sqlite|postgres] [--blocks 21] [--ops 60] [--smoke]

The sessions benchmark runs each backend in its own process, one after another; on a
shared machine its ratios moved by up to 0.5 between runs. Here every backend runs in
**one process, in alternating blocks**: block ``b`` runs each backend's ``ops`` operations
of one workload in turn (the order rotates and reverses from block to block), so slow
phases of the machine hit every backend alike. Each block gives one ratio per backend
(its median / the reference's median in that block); the table shows the median of those
per-block ratios with a bootstrap 95% confidence interval.

SQLite backends:

- ``django``: DjangoSession as configured by ``benchmarks/settings.py`` (Django's sync
  thread, ``transaction_mode=IMMEDIATE``, WAL, ``synchronous=NORMAL``);
- ``sdk-pool``: ``SQLiteSession`` as it runs in a long-lived process: the event loop's
  default executor already grown to several threads (``asyncio.to_thread`` hands each call
  to whichever idle thread takes it, each with its own connection);
- ``sdk-warm``: ``SQLiteSession`` on an executor of one thread (always the same warm
  thread and connection).

PostgreSQL (``--db postgres``): ``django`` against ``django-shipped``, the same
DjangoSession forced onto the path it falls back to (``_force_shipped_path``), to show
that the fast path costs PostgreSQL nothing.

Each backend has its own database file (or PostgreSQL database); the journal mode and
``synchronous`` setting of every backend's own connection are read back and printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks import items, report
from benchmarks.parity_contenders import Contender, build, durability
from benchmarks.parity_report import markdown, summarize
from benchmarks.sessions import RESULTS, _discard, machine
from benchmarks.targets import bulk_copy, max_id

WORKLOADS = {
    "add_items_2": "add_items (2 items)",
    "pop_item": "pop_item",
    "get_20_at_100": "get_items(limit=20), 100 items",
    "get_20_at_10k": "get_items(limit=20), 10k items",
    "get_20_at_1m": "get_items(limit=20), 1M items",
    "get_all_200": "get_items(), 200 items",
}


# A block should be short (tens of milliseconds) so that the machine's slow and fast
# phases fall on every backend alike: the whole-history read runs fewer operations.
OPS_SCALE = {"get_all_200": 0.25}


@dataclass
class Settings:
    blocks: int = 41
    ops: int = 60
    warmup: int = 5
    background: int = 1000
    large: int = 10_000
    huge: int = 1_000_000
    small: int = 200


SMOKE = Settings(blocks=3, ops=5, warmup=1, background=20, large=300, huge=1_000, small=40)


_counter = iter(range(10**9))


def _id(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{next(_counter)}"


async def _sized(contender: Contender, size: int, prefix: str) -> Any:
    session = await contender.make(_id(prefix))
    await session.add_items([items.user_message("the template of a bulk-loaded history")])
    if size > 1:
        template = await asyncio.to_thread(max_id, contender.target, contender.items_table)
        await asyncio.to_thread(
            bulk_copy, contender.target, contender.items_table, template, size - 1, "id"
        )
    return session


async def prepare(contender: Contender, settings: Settings, log: Callable[[str], None]) -> None:
    started = time.perf_counter()
    for _ in range(settings.background):
        session = await contender.make(_id("background"))
        await session.add_items(items.history_chunk())
    s = contender.sessions
    s["add_items_2"] = await contender.make(_id("add"))
    s["pop_item"] = pop = await contender.make(_id("pop"))
    # Two contenders (the SDK in both states) pop from the same session.
    needed = 2 * settings.blocks * (settings.ops + settings.warmup) + 20
    for start in range(0, needed, 20):
        await pop.add_items([items.marked(f"p{i}") for i in range(start, start + 20)])
    s["get_20_at_100"] = await _sized(contender, 100, "flat100")
    s["get_20_at_10k"] = await _sized(contender, settings.large, "large")
    s["get_20_at_1m"] = await _sized(contender, settings.huge, "huge")
    s["get_all_200"] = small = await contender.make(_id("small"))
    for _ in range(settings.small // 4):
        await small.add_items(items.history_chunk())
    log(f"  prepared {contender.label} in {time.perf_counter() - started:.1f}s")


def _operation(workload: str, session: Any) -> Callable[[], Awaitable[Any]]:
    if workload == "add_items_2":
        return lambda: session.add_items(items.turn_pair())
    if workload == "pop_item":
        return session.pop_item  # type: ignore[no-any-return]
    if workload == "get_all_200":
        return session.get_items  # type: ignore[no-any-return]
    return lambda: session.get_items(limit=20)


async def _block(contender: Contender, workload: str, settings: Settings) -> float:
    op = _operation(workload, contender.sessions[workload])
    samples = []
    with contender.state():
        for _ in range(settings.warmup):
            await op()
        for _ in range(max(3, int(settings.ops * OPS_SCALE.get(workload, 1)))):
            start = time.perf_counter()
            await op()
            samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def bootstrap_ci(values: list[float], rounds: int = 4000) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of the median of ``values``."""
    rng = random.Random(15)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))
    return medians[int(rounds * 0.025)], medians[int(rounds * 0.975) - 1]


async def measure(
    contenders: list[Contender], settings: Settings, log: Callable[[str], None]
) -> dict[str, Any]:
    reference = contenders[0]
    results: dict[str, Any] = {}
    for workload, title in WORKLOADS.items():
        medians: dict[str, list[float]] = {c.name: [] for c in contenders}
        for block in range(settings.blocks):
            order = contenders[block % len(contenders) :] + contenders[: block % len(contenders)]
            if block % 2:
                order.reverse()
            for contender in order:
                medians[contender.name].append(await _block(contender, workload, settings))
        entry: dict[str, Any] = {"title": title, "blocks": settings.blocks, "ops": settings.ops}
        for contender in contenders:
            own = medians[contender.name]
            entry[contender.name] = {"median_ms": round(statistics.median(own) * 1000, 4)}
            if contender is reference:
                continue
            ratios = [r / c for r, c in zip(medians[reference.name], own, strict=True)]
            low, high = bootstrap_ci(ratios)
            entry[contender.name].update(
                ratio=round(statistics.median(ratios), 3),
                ci95=[round(low, 3), round(high, 3)],
                blocks_at_or_below=sum(r <= 1 for r in ratios),
            )
        results[workload] = entry
        log(f"  {title}: {json.dumps({k: v for k, v in entry.items() if k != 'title'})}")
    return results


async def run(
    db: str, contenders: list[Contender], settings: Settings, log: Callable[[str], None]
) -> Any:
    try:
        by_name = {c.name: c for c in contenders}
        for contender in contenders:
            if contender.shares is None:
                with contender.state():
                    await prepare(contender, settings, log)
        for contender in contenders:
            if contender.shares is not None:
                source = by_name[contender.shares].sessions
                contender.sessions = {w: contender.adopt(s) for w, s in source.items()}
        for contender in contenders:
            contender.durability = await durability(contender)
        log("  durability: " + json.dumps({c.name: c.durability for c in contenders}))
        results = await measure(contenders, settings, log)
        return {
            "db": db,
            "settings": settings.__dict__,
            "contenders": {c.name: {"label": c.label, **c.durability} for c in contenders},
            "reference": contenders[0].name,
            "workloads": results,
        }
    finally:
        from django.db import connections

        from django_agent_sessions.store import bridge

        await bridge.run(connections.close_all)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default="sqlite", choices=["sqlite", "postgres"])
    parser.add_argument("--blocks", type=int, default=Settings.blocks)
    parser.add_argument("--ops", type=int, default=Settings.ops)
    parser.add_argument("--only", help="comma-separated workloads (default: all)")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="SQLite: measure the guarantee floor (benchmarks/guarantee_floor.py) against "
        "SQLiteSession and DjangoSession",
    )
    parser.add_argument(
        "--floor-columns",
        choices=["kept", "empty"],
        default="kept",
        help="with --floor: fill the browsing columns (kept) or write them empty, to "
        "measure what they cost",
    )
    parser.add_argument("--summarize", nargs="+", type=Path, help="result files to tabulate")
    args = parser.parse_args(argv)
    if args.summarize:
        print(summarize(args.summarize))
        return 0
    settings = SMOKE if args.smoke else Settings(blocks=args.blocks, ops=args.ops)
    if args.only:
        for name in set(WORKLOADS) - set(args.only.split(",")):
            del WORKLOADS[name]

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%SZ")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parity-") as workdir:
        contenders, names = build(
            args.db, Path(workdir), floor=args.floor, floor_columns=args.floor_columns == "kept"
        )
        try:
            result = asyncio.run(run(args.db, contenders, settings, log))
        finally:
            for name in names:
                _discard(args.db, name)
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["machine"] = machine([args.db])
    from importlib import metadata

    result["versions"] = {p: metadata.version(p) for p in ("django", "asgiref", "openai-agents")}
    text = markdown(result)
    print(text)
    if not args.no_write:
        kind = f"parity-{args.db}" + ("-floor" if args.floor else "")
        kind += "-no-columns" if args.floor and args.floor_columns == "empty" else ""
        report.write_results(args.out_dir, kind, stamp, result, "Parity, interleaved", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
