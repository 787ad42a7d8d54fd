"""One backend on one database, in a fresh process: ``python -m benchmarks.worker``.

Runs every workload and the correctness checks, then writes one JSON document.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import platform
import sys
import time
from importlib import metadata
from typing import Any

from benchmarks import correctness, workloads
from benchmarks.backends import BACKENDS, Backend
from benchmarks.targets import Target

_PACKAGES = (
    "django",
    "openai-agents",
    "asgiref",
    "psycopg",
    "sqlalchemy",
    "aiosqlite",
    "asyncpg",
    "openai-django-sessions",
    "agentic-django",
)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _versions() -> dict[str, str]:
    found = {}
    for package in _PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[package] = metadata.version(package)
    return found


async def _run(backend: Backend, profile: workloads.Profile) -> dict[str, Any]:
    try:
        results = await workloads.run_all(backend, profile, _log)
        procs, tasks = (2, 2) if profile is workloads.SMOKE else (4, 2)
        pops = await correctness.check_pops(
            backend, 40 if profile is workloads.SMOKE else 160, procs, tasks
        )
        _log(f"  concurrent pops: {pops}")
        batches = await correctness.check_batches(
            backend, 3 if profile is workloads.SMOKE else 10, procs, tasks
        )
        _log(f"  concurrent batches: {batches}")
    finally:
        await backend.close()
    return {"workloads": results, "correctness": {"pops": pops, "batches": batches}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", required=True, choices=sorted(BACKENDS))
    parser.add_argument("--db", required=True, choices=["sqlite", "postgres"])
    parser.add_argument("--name", required=True, help="SQLite file or PostgreSQL database")
    parser.add_argument("--out", required=True)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()

    backend = BACKENDS[args.backend](Target(args.db, args.name))
    document: dict[str, Any] = {
        "backend": backend.name,
        "label": backend.label,
        "db": args.db,
        "python": platform.python_version(),
        "versions": _versions(),
    }
    reason = backend.unavailable()
    if reason:
        document["skipped"] = reason
    else:
        started = time.perf_counter()
        backend.setup()
        profile = workloads.SMOKE if args.smoke else workloads.FULL
        document.update(asyncio.run(_run(backend, profile)))
        document["seconds"] = round(time.perf_counter() - started, 1)
    with open(args.out, "w") as out:
        json.dump(document, out, indent=1)


if __name__ == "__main__":
    main()
