"""Content search at scale: a user's search latency over 1,000,000 items, and what the
index costs ``add_items``.

    python -m benchmarks.search [--db sqlite|postgres] [--smoke] [--part latency|writes]
        [--queries 200] [--blocks 24] [--ops 150] [--variants JSON] [--out-dir DIR]

**Latency**: 100 users, 10,000 conversations of 100 items (``--smoke``: 10,000 items),
written by set-based SQL with text from a Zipf vocabulary (``search_data``), then the
index built once (``store.search.install``: PostgreSQL's GIN index, SQLite's FTS5 table
and triggers); then ``store.search.search(owner, query)`` for ``--queries`` queries of
random users, eight kinds in equal shares (a common, a middling, a rare and an absent
word, a three-letter prefix, a letter, two and three words), after an untimed pass of 20. The
target (issue): p95 under 200 ms. The baseline beside it, on the first 24 queries: the
same search without the index (SQLite's LIKE scan of the user's items, which the app
falls back to without FTS5; PostgreSQL with its bitmap scans off, so the GIN index is
not used).

**Write cost** (``search_writes``): ``DjangoSession.add_items`` with the index against the
same database without it, interleaved blocks in one process; target: at most 1.15x.

Each part runs in a process of its own (each has its own database; Django is set up once
per process); the parent prints the tables and writes the results JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks import report, search_data
from benchmarks.search_data import Query, Scale, percentile
from benchmarks.sessions import RESULTS, _discard, _prepare, machine

FULL, SMOKE = Scale(100, 10_000, 100), Scale(100, 100, 100)
TARGET_MS, BASELINE_QUERIES, WARM_UP = 200.0, 24, 20


@contextlib.contextmanager
def databases(db: str, kinds: list[str], scale: Scale, workdir: Path) -> Iterator[list[Any]]:
    """A fresh database per kind (Django aliases "default", "db1", ...), each with
    ``scale``'s users, conversations and items and the search index built once; yields
    what was made in each and how long it took."""
    from benchmarks.backends import DjangoSessionBackend
    from benchmarks.targets import Target

    names = [_prepare(db, kind, workdir) for kind in kinds]
    os.environ["BENCH_DB_NAMES"] = ",".join(names[1:])
    try:
        DjangoSessionBackend(Target(db, names[0])).setup()
        from django.core.management import call_command

        aliases = ["default", *(f"db{n}" for n in range(1, len(names)))]
        for alias in aliases[1:]:
            call_command("migrate", database=alias, verbosity=0)
        yield [build(scale, alias) for alias in aliases]
    finally:
        from django.db import connections

        connections.close_all()
        for name in names:
            _discard(db, name)


def build(scale: Scale, using: str = "default") -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.db import connections

    from django_agent_sessions.store import search

    rng = random.Random(7)
    words = search_data.vocabulary(rng)
    pool = search_data.sentences(words, search_data.SENTENCES, rng)
    connection = connections[using]
    users = (
        get_user_model()
        .objects.using(using)
        .bulk_create(get_user_model()(username=f"bench-user-{n}") for n in range(scale.users))
    )
    owners = sorted(user.pk for user in users)
    assert owners == list(range(owners[0], owners[0] + scale.users)), "consecutive keys"
    search.uninstall(connection)  # the migration installed it: the rows go in without it
    # Only while the rows are written and indexed once: a page cache that holds the
    # items' (session, id) index (SQLite), the memory a DBA gives an index build.
    sqlite = connection.vendor == "sqlite"
    setting = "PRAGMA cache_size = %s" if sqlite else "SET maintenance_work_mem = %s"
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA cache_size" if sqlite else "SHOW maintenance_work_mem")
        default = cursor.fetchone()[0]
        cursor.execute(setting % ("-262144" if sqlite else "'256MB'"))
    started = time.perf_counter()
    search_data.populate(connection, scale, pool, owners[0])
    populated = time.perf_counter()
    search.install(connection)
    indexed = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(setting % (default if sqlite else f"'{default}'"))
        # Autovacuum would have analysed the tables by the time anyone searches them.
        cursor.execute("ANALYZE" if sqlite else "VACUUM ANALYZE")
    return {
        "words": words,
        "pool": pool,
        "using": using,
        "owners": owners,
        "users": sorted(users, key=lambda user: user.pk),
        "populate_s": round(populated - started, 1),
        "index_s": round(indexed - populated, 1),
        "analyze_s": round(time.perf_counter() - indexed, 1),
    }


def latency(db: str, scale: Scale, count: int, workdir: Path) -> dict[str, Any]:
    with databases(db, ["search"], scale, workdir) as [made]:
        asked = search_data.queries(made["pool"], made["words"], scale.users, count, seed=11)
        owners = made["owners"]
        timed(owners, search_data.queries(made["pool"], made["words"], scale.users, WARM_UP, 5))
        samples = timed(owners, asked)
        baseline = timed(owners, asked[:BASELINE_QUERIES], indexed=False)
        indexed = timed(owners, asked[:BASELINE_QUERIES])
    by_kind: dict[str, list[tuple[float, int]]] = {}
    for query, sample in zip(asked, samples, strict=True):
        by_kind.setdefault(query.kind, []).append(sample)
    slowest = sorted(zip(samples, asked, strict=True), key=lambda pair: -pair[0][0])
    return {
        "scale": scale.__dict__,
        "seconds": {key: made[key] for key in ("populate_s", "index_s", "analyze_s")},
        "queries": len(asked),
        "all": summary(samples),
        "kinds": {kind: summary(values) for kind, values in by_kind.items()},
        "baseline": {"indexed": summary(indexed), "without": summary(baseline)},
        "slowest": [f"{q.text!r} ({q.kind}) {ms:.1f} ms" for (ms, _), q in slowest[:3]],
        "target_ms": TARGET_MS,
    }


def timed(owners: list[int], asked: list[Query], indexed: bool = True) -> list[tuple[float, int]]:
    """Each query's milliseconds and number of hits."""
    from django.db import connection

    from django_agent_sessions.store import search

    results = []
    with without_index(connection, not indexed):
        for query in asked:
            start = time.perf_counter()
            hits = search.search(owners[query.owner_index], query.text)
            results.append(((time.perf_counter() - start) * 1000, len(hits)))
    return results


@contextlib.contextmanager
def without_index(connection: Any, off: bool) -> Iterator[None]:
    """The search as the app runs it without the index (``off``)."""
    from django_agent_sessions.store import search

    if not off:
        yield
        return
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET enable_bitmapscan = off")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SET enable_bitmapscan = on")
        return
    has_fts = search.has_fts
    search.has_fts = lambda connection: False  # type: ignore[assignment]
    try:
        yield
    finally:
        search.has_fts = has_fts  # type: ignore[assignment]


def summary(samples: list[tuple[float, int]]) -> dict[str, float]:
    """Percentiles of the milliseconds, and the mean number of hits."""
    ordered = sorted(ms for ms, _ in samples)
    return {
        "n": len(ordered),
        "p50_ms": round(percentile(ordered, 0.50), 2),
        "p95_ms": round(percentile(ordered, 0.95), 2),
        "p99_ms": round(percentile(ordered, 0.99), 2),
        "max_ms": round(ordered[-1], 2) if ordered else 0.0,
        "hits": round(statistics.mean(hits for _, hits in samples), 1) if samples else 0.0,
    }


def latency_markdown(result: dict[str, Any], db: str) -> str:
    scale, seconds = result["scale"], result["seconds"]
    overall = result["all"]
    verdict = "met" if overall["p95_ms"] < TARGET_MS else "NOT met"
    lines = [
        f"{db}: {scale['conversations'] * scale['items_per_conversation']:,} items, "
        f"{scale['conversations']:,} conversations, {scale['users']} users; written in "
        f"{seconds['populate_s']} s, indexed in {seconds['index_s']} s, analysed in "
        f"{seconds['analyze_s']} s.",
        "",
        "| queries | n | p50 ms | p95 ms | p99 ms | max ms | mean hits | p95 / 200 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, values in [("all", overall), *result["kinds"].items()]:
        lines.append(
            f"| {name} | {values['n']} | {values['p50_ms']} | {values['p95_ms']} | "
            f"{values['p99_ms']} | {values['max_ms']} | {values['hits']} | "
            f"{values['p95_ms'] / TARGET_MS:.2f} |"
        )
    base = result["baseline"]
    lines += [
        "",
        f"Without the index, the first {BASELINE_QUERIES} queries: p50 "
        f"{base['without']['p50_ms']} ms, p95 {base['without']['p95_ms']} ms (with it: "
        f"{base['indexed']['p50_ms']} / {base['indexed']['p95_ms']} ms; p50 ratio "
        f"{base['without']['p50_ms'] / max(base['indexed']['p50_ms'], 0.001):.1f}x).",
        f"Slowest: {', '.join(result['slowest'])}.",
        f"p95 {overall['p95_ms']} ms, target < {TARGET_MS:.0f} ms: {verdict}.",
    ]
    return "\n".join(lines)


WRITES_FULL, WRITES_SMOKE = Scale(100, 200, 100), Scale(100, 20, 100)


def part(args: argparse.Namespace) -> dict[str, Any]:
    """One part, in this process."""
    from benchmarks import search_writes

    with tempfile.TemporaryDirectory(prefix="search-") as workdir:
        if args.part == "latency":
            scale = SMOKE if args.smoke else FULL
            return latency(args.db, scale, args.queries, Path(workdir))
        variants = json.loads(args.variants) if args.variants else {}
        scale = WRITES_SMOKE if args.smoke else WRITES_FULL
        return search_writes.writes(args.db, scale, args.blocks, args.ops, variants, Path(workdir))


def main(argv: list[str] | None = None) -> int:
    from benchmarks import search_writes

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default="sqlite", choices=["sqlite", "postgres"])
    parser.add_argument("--smoke", action="store_true", help="10,000 items, few blocks")
    parser.add_argument("--part", choices=["latency", "writes"], help="only this part")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--blocks", type=int, default=24)
    parser.add_argument("--ops", type=int, default=150)
    parser.add_argument(
        "--variants", help='SQLite, JSON: {"name": "fts5 options", ...} (search_writes)'
    )
    parser.add_argument("--json", type=Path, help="(a part's process) write its result here")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.smoke:
        args.queries, args.blocks, args.ops = min(args.queries, 48), 2, 10
    if args.json:  # a part's process
        args.json.write_text(json.dumps(part(args)))
        return 0
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%SZ")
    document: dict[str, Any] = {"benchmark": "search", "date": stamp, "db": args.db}
    texts = []
    for name in [args.part] if args.part else ["latency", "writes"]:
        started = time.perf_counter()
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            command = [sys.executable, "-m", "benchmarks.search", "--db", args.db]
            command += ["--smoke"] if args.smoke else []
            for option in ("queries", "blocks", "ops", "variants"):
                if getattr(args, option) is not None:
                    command += [f"--{option}", str(getattr(args, option))]
            subprocess.run([*command, "--part", name, "--json", out.name], check=True)
            document[name] = json.loads(Path(out.name).read_text())
        document[name]["wall_s"] = round(time.perf_counter() - started, 1)
        text = (
            latency_markdown(document[name], args.db)
            if name == "latency"
            else search_writes.markdown(document[name], args.db)
        )
        print("\n" + text + "\n", flush=True)
        texts.append(text)
    document["machine"] = machine([args.db])
    with open("/proc/loadavg") as load:
        document["load_average"] = load.read().split()[:3]
    kind = f"search-{args.db}" + (f"-{args.part}" if args.part else "")
    report.write_results(args.out_dir, kind, stamp, document, "Search", "\n\n".join(texts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
