"""The sessions benchmark: every backend, each in a fresh process, on the same database.

    python -m benchmarks.sessions [--db sqlite,postgres] [--backends a,b] [--smoke]

PostgreSQL is reached through libpq's ``PG*`` variables (``bin/bench`` starts a throwaway
server). Each backend gets its own fresh SQLite file (WAL) or database on that server,
dropped afterwards, so no backend reads another's rows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks import report
from benchmarks.backends import BACKENDS

RESULTS = Path(__file__).resolve().parent / "results"
ORDER = [
    "django",
    "django-pool",
    "django-prepared",
    "floor",
    "sdk-sqlite",
    "sdk-sqlalchemy",
    "openai-django-sessions",
    "agentic-django",
]


def _prepare(db: str, backend: str, workdir: Path) -> str:
    if db == "sqlite":
        path = workdir / f"{backend}.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
        return str(path)
    name = f"bench_{backend.replace('-', '_')}_{os.getpid()}"
    _admin(f"DROP DATABASE IF EXISTS {name}")
    _admin(f"CREATE DATABASE {name}")
    return name


def _discard(db: str, name: str) -> None:
    if db == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{name}{suffix}").unlink(missing_ok=True)
    else:
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(dbname="postgres", autocommit=True) as conn:
        conn.execute(sql)


def run_backend(
    db: str, backend: str, workdir: Path, smoke: bool, timeout: float
) -> dict[str, Any]:
    name = _prepare(db, backend, workdir)
    out = workdir / f"{db}-{backend}.json"
    command = [
        sys.executable,
        "-m",
        "benchmarks.worker",
        "--backend",
        backend,
        "--db",
        db,
        "--name",
        name,
        "--out",
        str(out),
    ] + (["--smoke"] if smoke else [])
    print(f"== {db} / {backend}", flush=True)
    try:
        completed = subprocess.run(command, timeout=timeout, check=False)
        if completed.returncode != 0 or not out.exists():
            return {
                "backend": backend,
                "label": BACKENDS[backend].label,
                "db": db,
                "error": f"worker exited with {completed.returncode}",
            }
        document: dict[str, Any] = json.loads(out.read_text())
    except subprocess.TimeoutExpired:
        return {
            "backend": backend,
            "label": BACKENDS[backend].label,
            "db": db,
            "error": f"worker timed out after {timeout:.0f}s",
        }
    finally:
        _discard(db, name)
    if "skipped" in document:
        print(f"   skipped: {document['skipped']}", flush=True)
    return document


def machine(dbs: list[str]) -> dict[str, Any]:
    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
    }
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            info["cpu"] = next(
                (line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line), ""
            )
    except OSError:
        pass
    if "postgres" in dbs:
        import psycopg

        with psycopg.connect(dbname="postgres") as conn:
            info["postgresql"] = conn.execute("SHOW server_version").fetchone()[0]  # type: ignore[index]
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--backends", default=",".join(ORDER))
    parser.add_argument("--smoke", action="store_true", help="seconds per backend; not speed")
    parser.add_argument("--out-dir", default=None, help="where the JSON goes")
    args = parser.parse_args(argv)
    dbs = [d for d in args.db.split(",") if d]
    backends = [b for b in args.backends.split(",") if b]
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        parser.error(f"unknown backends: {', '.join(unknown)}")

    started = time.perf_counter()
    docs = []
    with tempfile.TemporaryDirectory(prefix="agent-sessions-bench-") as tmp:
        for db in dbs:
            for backend in backends:
                docs.append(
                    run_backend(
                        db, backend, Path(tmp), args.smoke, timeout=120 if args.smoke else 600
                    )
                )
    checks = report.targets(docs)
    summary = "\n\n".join(f"#### {db}\n\n{report.matrix(docs, db)}" for db in dbs)
    markdown = "### summary: median ms (x DjangoSession)\n\n" + summary + "\n\n"
    markdown += "\n".join(report.db_tables(docs, db) for db in dbs)
    markdown += "\n### targets\n\n" + report.targets_table(checks) + "\n"
    print("\n" + markdown)
    errors = [d for d in docs if "error" in d]
    for doc in errors:
        print(f"ERROR {doc['db']}/{doc['backend']}: {doc['error']}")

    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%SZ")
    result = {
        "benchmark": "sessions",
        "date": stamp,
        "smoke": args.smoke,
        "machine": machine(dbs),
        "seconds": round(time.perf_counter() - started, 1),
        "results": docs,
        "targets": checks,
    }
    out_dir = Path(args.out_dir) if args.out_dir else RESULTS
    path = report.write_results(out_dir, "sessions", stamp, result, "Sessions benchmark", markdown)
    print(f"\nwrote {path} ({result['seconds']}s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
