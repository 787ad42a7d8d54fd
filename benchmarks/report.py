"""Ratio tables and target checks over the worker documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WORKLOADS = {
    "add_items_2": "add_items (2 items)",
    "get_items_20_of_10k": "get_items(limit=20), 10k items",
    "get_items_all_of_200": "get_items(), 200 items",
    "pop_item": "pop_item",
    "turn_x50_sessions": "turn (read+2 writes), 50 sessions",
    "turns_8_concurrent": "turn, 8 concurrent tasks",
    "flat_get_20_at_100": "limit=20 at 100 items",
    "flat_get_20_at_10k": "limit=20 at 10k items",
    "flat_get_20_at_1m": "limit=20 at 1M items",
    "compacting_turn": "turn compacted by OpenAIResponsesCompactionSession (stub API)",
}
REFERENCE, FLOOR = "django", "floor"
CONCURRENT = "turns_8_concurrent"


def _ran(docs: list[dict[str, Any]], db: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["db"] == db and "workloads" in d]


def _median(doc: dict[str, Any] | None, workload: str) -> float | None:
    if not doc:
        return None
    return doc["workloads"].get(workload, {}).get("median_ms")


def _rate(doc: dict[str, Any] | None, workload: str) -> float | None:
    if not doc:
        return None
    return doc["workloads"].get(workload, {}).get("ops_per_s")


def _ratio(value: float | None, reference: float | None) -> str:
    return f"{value / reference:.2f}" if value and reference else "-"


def db_tables(docs: list[dict[str, Any]], db: str) -> str:
    """Markdown: per workload, each backend's median, p90, ops/s and its two ratios."""
    ran = _ran(docs, db)
    by_name = {d["backend"]: d for d in ran}
    lines = [f"### {db}", ""]
    for workload, title in WORKLOADS.items():
        lines += [
            f"**{title}**",
            "",
            "| backend | median ms | p90 ms | ops/s | x DjangoSession | x floor |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for doc in ran:
            result = doc["workloads"].get(workload)
            if not result or "median_ms" not in result:  # a backend that cannot run it
                continue
            median = result["median_ms"]
            lines.append(
                f"| {doc['label']} | {median:.3f} | {result['p90_ms']:.3f} | "
                f"{result['ops_per_s']:.0f} | "
                f"{_ratio(median, _median(by_name.get(REFERENCE), workload))} | "
                f"{_ratio(median, _median(by_name.get(FLOOR), workload))} |"
            )
        if workload == CONCURRENT:
            lines += ["", "turns completed per task (slowest / fastest):", ""]
            lines += [
                f"- {doc['label']}: {r['slowest_task_turns']} / {r['fastest_task_turns']}"
                for doc in ran
                if "slowest_task_turns" in (r := doc["workloads"].get(workload, {}))
            ]
        lines.append("")
    lines += [
        "**peak memory reading a 10k-item session (tracemalloc) and correctness**",
        "",
        "| backend | peak KiB | read ms | concurrent pops | concurrent batches |",
        "|---|---:|---:|---|---|",
    ]
    for doc in ran:
        memory = doc["workloads"]["memory_read_10k"]
        pops, batches = doc["correctness"]["pops"], doc["correctness"]["batches"]
        pop_text = (
            "ok"
            if pops["ok"]
            else (
                f"FAIL: {pops['duplicates']} dup, {pops['lost']} lost, {pops['left_behind']} left"
            )
        )
        batch_text = (
            "ok"
            if batches["ok"]
            else (
                f"FAIL: {batches['stored']}/{batches['expected']} stored, "
                f"{batches['split_or_reordered_batches']} split"
            )
        )
        lines.append(
            f"| {doc['label']} | {memory['peak_kib']} | {memory['ms']} | "
            f"{pop_text} | {batch_text} |"
        )
    skipped = [d for d in docs if d["db"] == db and "skipped" in d]
    if skipped:
        lines += ["", "Skipped: " + "; ".join(f"{d['skipped']}" for d in skipped)]
    lines.append("")
    return "\n".join(lines)


def targets(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's targets, each with the measured numbers and whether it is met."""
    checks = []
    for db in ("sqlite", "postgres"):
        ran = {d["backend"]: d for d in _ran(docs, db)}
        ours = ran.get(REFERENCE)
        if not ours:
            continue
        for workload in WORKLOADS:
            mine = _median(ours, workload)
            for name, doc in ran.items():
                if name in (REFERENCE, FLOOR) or name.startswith("django-"):
                    continue
                theirs = _median(doc, workload)
                if mine is not None and theirs is not None:
                    checks.append(
                        {
                            "db": db,
                            "target": f"{workload}: DjangoSession <= {name}",
                            "ours": mine,
                            "theirs": theirs,
                            "met": mine <= theirs,
                        }
                    )
        for name, doc in ran.items():
            # The concurrent workload is about throughput: all 8 tasks' turns per second.
            if name in (REFERENCE, FLOOR) or name.startswith("django-"):
                continue
            mine_rate = _rate(ours, CONCURRENT)
            theirs_rate = _rate(doc, CONCURRENT)
            if mine_rate and theirs_rate:
                checks.append(
                    {
                        "db": db,
                        "target": f"{CONCURRENT} throughput: DjangoSession >= {name}",
                        "ours": mine_rate,
                        "theirs": theirs_rate,
                        "unit": "turns/s",
                        "met": mine_rate >= theirs_rate,
                    }
                )
        if db == "postgres" and FLOOR in ran:
            for variant in (REFERENCE, "django-prepared"):
                for workload in ("add_items_2", "pop_item"):
                    mine = _median(ran.get(variant), workload)
                    floor = _median(ran[FLOOR], workload)
                    if mine and floor:
                        checks.append(
                            {
                                "db": db,
                                "target": f"{workload}: {variant} within 1.5x of floor",
                                "ours": mine,
                                "theirs": floor,
                                "met": mine <= 1.5 * floor,
                            }
                        )
        at_100, at_1m = _median(ours, "flat_get_20_at_100"), _median(ours, "flat_get_20_at_1m")
        if at_100 and at_1m:
            checks.append(
                {
                    "db": db,
                    "target": "limit=20 at 1M within 1.5x of at 100",
                    "ours": at_1m,
                    "theirs": at_100,
                    "met": at_1m <= 1.5 * at_100,
                }
            )
        for name, doc in ran.items():
            correct = doc["correctness"]["pops"]["ok"] and doc["correctness"]["batches"]["ok"]
            checks.append({"db": db, "target": f"correctness: {name}", "met": correct})
    return checks


def write_results(
    out_dir: Path, kind: str, stamp: str, document: dict[str, Any], heading: str, markdown: str
) -> Path:
    """``<kind>-<stamp>.json``, and ``<kind>-latest.json`` / ``.md`` beside it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{kind}-{stamp}.json"
    text = json.dumps(document, indent=1)
    path.write_text(text)
    (out_dir / f"{kind}-latest.json").write_text(text)
    (out_dir / f"{kind}-latest.md").write_text(
        f"{heading}, {stamp}, {json.dumps(document['machine'])}\n\n{markdown}\n"
    )
    return path


def targets_table(checks: list[dict[str, Any]]) -> str:
    lines = ["| db | target | DjangoSession | other | met |", "|---|---|---:|---:|---|"]
    for c in checks:
        unit = c.get("unit", "ms")
        digits = 3 if unit == "ms" else 0
        ours = f"{c['ours']:.{digits}f} {unit}" if "ours" in c else ""
        theirs = f"{c['theirs']:.{digits}f} {unit}" if "theirs" in c else ""
        lines.append(
            f"| {c['db']} | {c['target']} | {ours} | {theirs} | {'yes' if c['met'] else '**no**'} |"
        )
    return "\n".join(lines)


SHORT = {
    "django": "DjangoSession",
    "django-pool": "pool",
    "django-prepared": "prepared",
    "floor": "floor",
    "sdk-sqlite": "SQLiteSession",
    "sdk-sqlalchemy": "SQLAlchemySession",
    "openai-django-sessions": "openai-django-sessions",
    "agentic-django": "agentic-django",
}


def matrix(docs: list[dict[str, Any]], db: str) -> str:
    """Markdown: one row per workload, one column per backend, median ms (x DjangoSession)."""
    ran = _ran(docs, db)
    ours = next((d for d in ran if d["backend"] == REFERENCE), None)
    header = "| workload | " + " | ".join(SHORT.get(d["backend"], d["backend"]) for d in ran)
    lines = [header + " |", "|---|" + "---:|" * len(ran)]
    for workload, title in WORKLOADS.items():
        cells = []
        for doc in ran:
            median = _median(doc, workload)
            reference = _median(ours, workload)
            ratio = f" ({median / reference:.2f}x)" if median and reference else ""
            cells.append(f"{median:.3f}{ratio}" if median is not None else "-")
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    memory = [f"{d['workloads']['memory_read_10k']['peak_kib'] / 1024:.1f}" for d in ran]
    lines.append("| peak MiB reading 10k items | " + " | ".join(memory) + " |")
    correct = []
    for doc in ran:
        pops, batches = doc["correctness"]["pops"], doc["correctness"]["batches"]
        text = "ok" if pops["ok"] and batches["ok"] else "**FAIL**"
        if not pops["ok"]:
            text += f" {pops['duplicates']} dup pops, {pops['lost']} lost"
        if not batches["ok"]:
            text += f" {batches['split_or_reordered_batches']} split batches"
        correct.append(text)
    lines.append("| concurrent pops + batches | " + " | ".join(correct) + " |")
    return "\n".join(lines)
