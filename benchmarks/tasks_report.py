"""The runs-as-tasks benchmark's tables and targets, from its bursts' results.

Time to first token is pooled over every client of every round of a mode (p50/p95/p99);
a tasks mode's **overhead** is paired: each round's tasks percentile minus the same
round's inline one, and the median of those differences over the rounds (the modes
alternate within a round, so noise hits all of them alike). The target of the issue: a
p95 overhead of at most 50 ms. CPU per streamed token is each process's CPU seconds over
a burst (from the send to the last run's end) divided by the tokens the clients read,
the median over the rounds.
"""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.task_burst import pct

INLINE = "inline"
P95_OVERHEAD_MS = 50.0
_PCTS = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _median3(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _of(results: list[dict[str, Any]], scenario: str, mode: str) -> list[dict[str, Any]]:
    return [r for r in results if r["scenario"] == scenario and r["mode"] == mode]


def summarize(
    results: list[dict[str, Any]], scenarios: list[str], modes: list[str]
) -> list[dict[str, Any]]:
    """One row per scenario and mode (see the module)."""
    rows = []
    for scenario in scenarios:
        inline = {r["round"]: r for r in _of(results, scenario, INLINE)}
        for mode in modes:
            bursts = _of(results, scenario, mode)
            if not bursts:
                continue
            ttfts = [t for r in bursts for t in r["ttfts"]]
            row: dict[str, Any] = {"scenario": scenario, "mode": mode, "rounds": len(bursts)}
            for name, q in _PCTS:
                row[f"ttft_{name}_ms"] = pct(ttfts, q)
                if mode != INLINE:
                    paired = [
                        r[f"ttft_{name}_ms"] - inline[r["round"]][f"ttft_{name}_ms"]
                        for r in bursts
                        if r["round"] in inline
                        and r[f"ttft_{name}_ms"] is not None
                        and inline[r["round"]][f"ttft_{name}_ms"] is not None
                    ]
                    row[f"overhead_{name}_ms"] = _median(paired)
                    row[f"overhead_{name}_rounds_ms"] = [round(d, 1) for d in paired]
            row["clients"] = sum(r["clients"] for r in bursts)
            row["completed"] = sum(r["completed"] for r in bursts)
            row["hung"] = sum(r["hung"] for r in bursts)
            row["errors"] = sum(r["error_count"] for r in bursts)
            row["queue_wait_p50_ms"] = _median([w for r in bursts if (w := r["queue_wait_p50_ms"])])
            row["queue_wait_p95_ms"] = _median([w for r in bursts if (w := r["queue_wait_p95_ms"])])
            row["peak_running_runs"] = max(r["peak_running_runs"] for r in bursts)
            row.update(_costs(bursts))
            rows.append(row)
    return rows


def _costs(bursts: list[dict[str, Any]]) -> dict[str, Any]:
    """CPU seconds and µs per token of each process, peak RSS (medians over rounds)."""
    out: dict[str, Any] = {"tokens": _median([r["tokens"] for r in bursts])}
    for process in ("web", "task worker"):
        if process not in bursts[0]["cpu_s"]:
            continue
        key = process.replace(" ", "_")
        out[f"{key}_cpu_s"] = _median3([r["cpu_s"][process] for r in bursts])
        out[f"{key}_us_per_token"] = _median(
            [1e6 * r["cpu_s"][process] / r["tokens"] for r in bursts if r["tokens"]]
        )
        out[f"{key}_rss_peak_mib"] = max(r["rss_peak_mib"].get(process, 0) for r in bursts)
    out["total_us_per_token"] = _median(
        [1e6 * sum(r["cpu_s"].values()) / r["tokens"] for r in bursts if r["tokens"]]
    )
    return out


def targets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    checks = []
    for row in rows:
        if row["mode"] != INLINE:
            overhead = row.get("overhead_p95_ms")
            checks.append(
                {
                    "target": f"{row['mode']}, {row['scenario']}: TTFT p95 overhead "
                    f"against inline <= {P95_OVERHEAD_MS:.0f} ms",
                    "value_ms": overhead,
                    "met": overhead is not None and overhead <= P95_OVERHEAD_MS,
                }
            )
        checks.append(
            {
                "target": f"{row['mode']}, {row['scenario']}: every run completes",
                "value": f"{row['completed']}/{row['clients']}",
                "met": row["completed"] == row["clients"],
            }
        )
    return checks


def _cell(value: Any, sign: bool = False, digits: int = 1) -> str:
    if value is None:
        return "-"
    if sign:
        return f"{value:+.{digits}f}"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def report(rows: list[dict[str, Any]], checks: list[dict[str, Any]], setup: dict[str, Any]) -> str:
    lines = [
        "### Time to first token (ms; overhead = median over rounds of tasks - inline, paired)",
        "",
        "| scenario | mode | p50 | p95 | p99 | +p50 | +p95 | +p99 | queue wait p50 / p95 "
        "| completed |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        wait = (
            f"{_cell(r['queue_wait_p50_ms'])} / {_cell(r['queue_wait_p95_ms'])}"
            if r["mode"] != INLINE
            else "-"
        )
        lines.append(
            f"| {r['scenario']} | {r['mode']} | {_cell(r['ttft_p50_ms'])} | "
            f"{_cell(r['ttft_p95_ms'])} | {_cell(r['ttft_p99_ms'])} | "
            + " | ".join(_cell(r.get(f"overhead_{n}_ms"), True) for n, _ in _PCTS)
            + f" | {wait} | {r['completed']}/{r['clients']} |"
        )
    biggest = max((r["clients"] // max(1, r["rounds"]) for r in rows), default=0)
    lines += [
        "",
        f"### One worker process holding {biggest} concurrent runs (medians over rounds)",
        "",
        "| mode | runs completed | peak running | process | CPU s | µs CPU / token | "
        "peak RSS MiB |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        if r["clients"] // max(1, r["rounds"]) != biggest:
            continue
        for process in ("web", "task worker"):
            key = process.replace(" ", "_")
            if f"{key}_cpu_s" not in r:
                continue
            lines.append(
                f"| {r['mode']} | {r['completed']}/{r['clients']} | {r['peak_running_runs']} | "
                f"{process} | {_cell(r[f'{key}_cpu_s'], digits=2)} | "
                f"{_cell(r[f'{key}_us_per_token'])} | {_cell(r[f'{key}_rss_peak_mib'])} |"
            )
        lines.append(f"| {r['mode']} | | | **all** | | {_cell(r['total_us_per_token'])} | |")
    lines += ["", "### Targets", "", "| target | value | met |", "|---|---:|---|"]
    for c in checks:
        value = _cell(c.get("value_ms"), True) + " ms" if "value_ms" in c else c["value"]
        lines.append(f"| {c['target']} | {value} | {'yes' if c['met'] else '**no**'} |")
    lines += ["", "Task workers: " + "; ".join(f"{k}: {v}" for k, v in setup.items())]
    return "\n".join(lines)
