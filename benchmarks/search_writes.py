"""What the search index costs ``DjangoSession.add_items``: the same database with the
index and with it removed (``store.search.uninstall``), interleaved in one process.

Each mode has a database of its own, made alike (100 users, 200 conversations of 100
items, ``--smoke``: 20, written as the latency part writes its million): the app's index
in one, none in the other (and, with ``variants``, another definition of the index in
each of the others). Toggling one database instead would rebuild the index every block:
FTS5's first thousands of writes after a rebuild merge the segments it left, two to
three times the cost of its writes later on, which no deployment pays per write. Each
database first takes ``WARM_UP`` calls untimed; then in each of ``blocks`` blocks each
mode, in turns (the order rotates and alternates), times ``ops`` calls of ``add_items``
on 50 of its conversations, round-robin, in the batches of a chat with tools: a user
message; a tool call, its output and the reply; a user message; a reply (one to three
items, text from the same vocabulary). A block's cost of a mode is the mean of its calls
(an index's deferred work, FTS5's merges, SQLite's batches, falls on some calls only);
the table shows the median of the blocks' ratios (mode / no index) with a bootstrap 95%
interval (``parity.bootstrap_ci``; the target is judged on it), the ratio of all calls'
means (every block's deferred work counted) and that of the medians of single calls.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import random
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

from benchmarks.parity import bootstrap_ci
from benchmarks.search_data import Scale

TARGET, SESSIONS, WARM_UP = 1.15, 50, 400
PLAIN, INDEXED = "no index", "index"
_SETTINGS = ("automerge", "crisismerge", "pgsz", "usermerge")


def batches(pool: list[str], rng: random.Random) -> Iterator[list[Any]]:
    """The batches of a chat with tools, endlessly."""
    for turn in itertools.count():
        call_id = f"call_bench_{turn}"
        yield [{"role": "user", "content": rng.choice(pool)}]
        yield [
            {
                "type": "function_call",
                "call_id": call_id,
                "name": "lookup",
                "arguments": json.dumps({"query": rng.choice(pool)[:20]}),
            },
            {"type": "function_call_output", "call_id": call_id, "output": rng.choice(pool)},
            _reply(" ".join(rng.choice(pool) for _ in range(6))),
        ]
        yield [{"role": "user", "content": " ".join(rng.choice(pool) for _ in range(2))}]
        yield [_reply(" ".join(rng.choice(pool) for _ in range(6)))]


def _reply(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def put_variant(connection: Any, options: str) -> None:
    """SQLite: the app's index installed with changes (``options``, comma-separated):
    ``items=N`` for ``PENDING_ITEMS``; ``per-item`` to add every item in its own
    statement, as before batches (the mark set past any id); ``automerge=N``,
    ``crisismerge=N``, ``pgsz=N``, ``usermerge=N`` as FTS5 settings; anything else as the
    FTS5 table's options instead of the app's (the table made again and rebuilt)."""
    from django_agent_sessions.models import SessionItem
    from django_agent_sessions.store import search, search_statements
    from django_agent_sessions.store.statements import SEARCH_FTS as fts
    from django_agent_sessions.store.statements import SEARCH_STATE

    parts = [part.strip() for part in options.split(",") if part.strip()]
    named = dict(part.split("=", 1) for part in parts if "=" in part and "'" not in part)
    pending = search_statements.PENDING_ITEMS
    search_statements.PENDING_ITEMS = int(named.pop("items", pending))
    try:
        search.install(connection)
    finally:
        search_statements.PENDING_ITEMS = pending
    table = [p for p in parts if p.split("=")[0] not in (*_SETTINGS, "items", "per-item")]
    statements = []
    if table:
        content = f"content='{SessionItem._meta.db_table}', content_rowid='id'"
        statements += [
            f"DROP TABLE {fts}",
            f"CREATE VIRTUAL TABLE {fts} USING fts5(search_text, {content}, {', '.join(table)})",
            f"INSERT INTO {fts}({fts}) VALUES ('rebuild')",
        ]
    statements += [
        f"INSERT INTO {fts}({fts}, rank) VALUES ('{key}', {int(value)})"
        for key, value in named.items()
        if key in _SETTINGS
    ]
    if "per-item" in parts:
        statements.append(f"UPDATE {SEARCH_STATE} SET indexed_to = 9223372036854775807")
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def setups(variants: dict[str, str]) -> dict[str, Callable[[Any], None]]:
    """Each mode's index, put in place once in its database."""
    from django_agent_sessions.store import search

    return {
        PLAIN: search.uninstall,
        INDEXED: search.install,
        **{name: functools.partial(put_variant, options=opts) for name, opts in variants.items()},
    }


async def run(
    made: list[dict[str, Any]], blocks: int, ops: int, names: list[str]
) -> dict[str, Any]:
    from django_agent_sessions import DjangoSession

    turns = batches(made[0]["pool"], random.Random(3))
    sessions = {
        name: [
            DjangoSession(f"bench-{k}", owner=db["users"][k % len(db["users"])], using=db["using"])
            for k in range(SESSIONS)
        ]
        for name, db in zip(names, made, strict=True)
    }
    for name in names:
        for index in range(WARM_UP):
            await sessions[name][index % SESSIONS].add_items(next(turns))
    means: dict[str, list[float]] = {name: [] for name in names}
    calls: dict[str, list[float]] = {name: [] for name in names}
    for block in range(blocks):
        order = names[block % len(names) :] + names[: block % len(names)]
        for name in order if block % 2 == 0 else order[::-1]:
            samples = []
            for index in range(ops):
                batch = next(turns)
                start = time.perf_counter()
                await sessions[name][index % SESSIONS].add_items(batch)
                samples.append(time.perf_counter() - start)
            means[name].append(statistics.mean(samples))
            calls[name] += samples
    return summarize(means, calls, blocks, ops)


def summarize(
    means: dict[str, list[float]], calls: dict[str, list[float]], blocks: int, ops: int
) -> dict[str, Any]:
    modes: dict[str, dict[str, Any]] = {}
    for name in means:
        ordered = sorted(calls[name])
        modes[name] = {
            "mean_ms": round(statistics.mean(ordered) * 1000, 4),
            "median_call_ms": round(statistics.median(ordered) * 1000, 4),
            "p99_call_ms": round(ordered[int(len(ordered) * 0.99)] * 1000, 3),
        }
        if name == PLAIN:
            continue
        ratios = [m / p for m, p in zip(means[name], means[PLAIN], strict=True)]
        low, high = bootstrap_ci(ratios)
        modes[name].update(
            ratio=round(statistics.median(ratios), 3),
            ci95=[round(low, 3), round(high, 3)],
            call_ratio=round(statistics.median(calls[name]) / statistics.median(calls[PLAIN]), 3),
            **means_ratio(means[name], means[PLAIN]),
        )
    return {
        "blocks": blocks,
        "ops": ops,
        "warm_up": WARM_UP,
        "target": TARGET,
        "modes": modes,
        "met": modes[INDEXED]["ratio"] <= TARGET,
    }


def means_ratio(mode: list[float], plain: list[float], rounds: int = 4000) -> dict[str, Any]:
    """The ratio of all calls' means (every block's deferred work counted, however
    unevenly it fell), with a 95% bootstrap interval over the blocks."""
    rng, pairs = random.Random(15), list(zip(mode, plain, strict=True))
    ratios = sorted(
        sum(m for m, _ in drawn) / sum(p for _, p in drawn)
        for drawn in (rng.choices(pairs, k=len(pairs)) for _ in range(rounds))
    )
    low, high = ratios[int(rounds * 0.025)], ratios[int(rounds * 0.975) - 1]
    return {
        "means_ratio": round(sum(mode) / sum(plain), 3),
        "means_ci95": [round(low, 3), round(high, 3)],
    }


def writes(
    db: str, scale: Scale, blocks: int, ops: int, variants: dict[str, str], workdir: Any
) -> dict[str, Any]:
    from django.db import connections

    from benchmarks.search import databases

    names = [PLAIN, INDEXED, *variants]
    kinds = ["search_w_" + "".join(c for c in n if c.isalnum()) for n in names]
    with databases(db, kinds, scale, workdir) as made:
        modes = setups(variants)
        for name, built in zip(names, made, strict=True):
            modes[name](connections[built["using"]])
        result = asyncio.run(run(made, blocks, ops, names))
    result["scale"] = scale.__dict__
    result["variants"] = variants
    return result


def markdown(result: dict[str, Any], db: str) -> str:
    lines = [
        f"| add_items, 1-3 items, {db} | mean ms | median ms | p99 ms | x no index: median "
        "of blocks (95% CI) | x no index: all calls' means (95% CI) | x no index: medians |",
        "|---|---:|---:|---:|---|---|---:|",
    ]
    for name, mode in result["modes"].items():
        ratio = f"{mode['ratio']} ({mode['ci95'][0]}-{mode['ci95'][1]})" if "ratio" in mode else "1"
        low, high = mode.get("means_ci95", ("", ""))
        means = f"{mode['means_ratio']} ({low}-{high})" if "means_ratio" in mode else "1"
        lines.append(
            f"| {name} | {mode['mean_ms']} | {mode['median_call_ms']} | {mode['p99_call_ms']} "
            f"| {ratio} | {means} | {mode.get('call_ratio', 1)} |"
        )
    verdict = "met" if result["met"] else "NOT met"
    lines += [
        "",
        f"{db}: {result['blocks']} blocks of {result['ops']} calls per mode after "
        f"{result['warm_up']} untimed; index / no index {result['modes'][INDEXED]['ratio']}, "
        f"target <= {TARGET}: {verdict}.",
    ]
    return "\n".join(lines)
