"""The correctness column: concurrent pops and concurrent batches from several processes.

Each check runs ``processes`` fresh processes with ``tasks`` asyncio tasks each, all on
one session, so that locks inside one process (a single sync thread, a per-file lock)
cannot hide a race that separate workers would hit.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from typing import Any

from benchmarks import items
from benchmarks.backends import BACKENDS, Backend
from benchmarks.targets import Target
from benchmarks.workloads import new_id

BATCH = 4


def _child(
    name: str, target: Target, mode: str, session_id: str, proc: int, tasks: int, batches: int
) -> list[str]:
    backend = BACKENDS[name](target)
    backend.setup(create_schema=False)
    return asyncio.run(_child_async(backend, mode, session_id, proc, tasks, batches))


async def _child_async(
    backend: Backend, mode: str, session_id: str, proc: int, tasks: int, batches: int
) -> list[str]:
    async def popper() -> list[str]:
        session = await backend.make(session_id)
        popped = []
        for _ in range(10_000):  # bound; the session holds far fewer items
            item = await session.pop_item()
            if item is None:
                break
            popped.append(items.marker_of(item))
        return popped

    async def writer(task: int) -> list[str]:
        session = await backend.make(session_id)
        for batch in range(batches):
            await session.add_items(
                [items.marked(f"{proc}-{task}-{batch}-{k}") for k in range(BATCH)]
            )
        return []

    work = [popper() if mode == "pop" else writer(t) for t in range(tasks)]
    try:
        results = await asyncio.gather(*work)
    finally:
        await backend.close()
    return [marker for result in results for marker in result]


def _in_processes(
    backend: Backend, mode: str, session_id: str, processes: int, tasks: int, batches: int
) -> list[str]:
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        args = [
            (backend.name, backend.target, mode, session_id, p, tasks, batches)
            for p in range(processes)
        ]
        results = pool.starmap_async(_child, args).get(timeout=120)
    return [marker for result in results for marker in result]


async def check_pops(backend: Backend, count: int, processes: int, tasks: int) -> dict[str, Any]:
    session_id = new_id("cpop")
    session = await backend.make(session_id)
    markers = [f"m{i}" for i in range(count)]
    for start in range(0, count, 20):
        await session.add_items([items.marked(m) for m in markers[start : start + 20]])
    popped = await asyncio.to_thread(_in_processes, backend, "pop", session_id, processes, tasks, 0)
    remaining = await session.get_items()
    duplicates = len(popped) - len(set(popped))
    lost = len(set(markers) - set(popped))
    return {
        "items": count,
        "popped": len(popped),
        "duplicates": duplicates,
        "lost": lost,
        "left_behind": len(remaining),
        "ok": duplicates == 0 and lost == 0 and not remaining,
    }


async def check_batches(
    backend: Backend, batches: int, processes: int, tasks: int
) -> dict[str, Any]:
    session_id = new_id("cbatch")
    session = await backend.make(session_id)
    await session.add_items([items.marked("start")])
    await asyncio.to_thread(_in_processes, backend, "batch", session_id, processes, tasks, batches)
    stored = [items.marker_of(i) for i in await session.get_items()][1:]
    expected = processes * tasks * batches * BATCH
    broken = 0
    for index in range(0, len(stored), BATCH):
        group = stored[index : index + BATCH]
        prefix = group[0].rsplit("-", 1)[0] if group else ""
        if group != [f"{prefix}-{k}" for k in range(BATCH)]:
            broken += 1
    return {
        "expected": expected,
        "stored": len(stored),
        "split_or_reordered_batches": broken,
        "ok": len(stored) == expected and broken == 0 and len(set(stored)) == expected,
    }
