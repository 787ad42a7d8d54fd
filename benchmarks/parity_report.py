"""The parity benchmark's tables: one run's, and one over several runs' result files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def markdown(document: dict[str, Any]) -> str:
    contenders = document["contenders"]
    names = list(contenders)
    head = ["workload", *(contenders[n]["label"] + " ms" for n in names)]
    reference = contenders[names[0]]["label"]
    head += [f"{reference} / {contenders[n]['label']} (95% CI)" for n in names[1:]]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for entry in document["workloads"].values():
        cells = [entry["title"], *(f"{entry[n]['median_ms']:.3f}" for n in names)]
        for n in names[1:]:
            r = entry[n]
            cells.append(
                f"{r['ratio']:.2f} ({r['ci95'][0]:.2f}-{r['ci95'][1]:.2f}), "
                f"{r['blocks_at_or_below']}/{entry['blocks']} blocks <= 1"
            )
        lines.append("| " + " | ".join(cells) + " |")
    durability = "; ".join(
        f"{c['label']}: " + ", ".join(f"{k}={v}" for k, v in c.items() if k != "label")
        for c in contenders.values()
    )
    s = document["settings"]
    return (
        "\n".join(lines)
        + f"\n\n{s['blocks']} interleaved blocks of {s['ops']} operations (after {s['warmup']}"
        f" warm-up) per backend and workload; ratio = median of per-block median ratios.\n\n"
        f"Durability: {durability}\n"
    )


def summarize(paths: list[Path]) -> str:
    """One table over several runs: each run's ratios (and CI) to every other contender."""
    docs = [json.loads(path.read_text()) for path in paths]
    names = list(docs[0]["contenders"])[1:]
    labels = docs[0]["contenders"]
    head = ["workload"] + [
        f"run {i + 1}: / {labels[n]['label']}" for i in range(len(docs)) for n in names
    ]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for workload, entry in docs[0]["workloads"].items():
        cells = [entry["title"]]
        for doc in docs:
            for n in names:
                r = doc["workloads"][workload][n]
                cells.append(f"{r['ratio']:.2f} ({r['ci95'][0]:.2f}-{r['ci95'][1]:.2f})")
        lines.append("| " + " | ".join(cells) + " |")
    stamps = ", ".join(path.stem for path in paths)
    return "\n".join(lines) + f"\n\nRuns: {stamps}\n"
