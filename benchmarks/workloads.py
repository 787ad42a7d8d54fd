"""The timed workloads. Every loop is bounded by an operation count and a time budget."""

from __future__ import annotations

import asyncio
import statistics
import time
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from agents.memory import SessionSettings

from benchmarks import items
from benchmarks.backends import Backend
from benchmarks.targets import bulk_copy, max_id


@dataclass(frozen=True)
class Profile:
    """How much work each workload does: the full run, or a seconds-long smoke run."""

    ops: int = 300
    seconds: float = 3.0
    large: int = 10_000
    huge: int = 1_000_000
    small: int = 200
    sessions: int = 50
    rounds: int = 4
    tasks: int = 8
    warmup: int = 5
    # Other conversations in the database, as in any real deployment. Without them the
    # planner's statistics see two or three conversations and estimate every one at
    # "half the table", which no production database looks like.
    background: int = 1000


FULL = Profile()
SMOKE = Profile(
    ops=15,
    seconds=0.3,
    large=400,
    huge=2_000,
    small=40,
    sessions=5,
    rounds=2,
    tasks=4,
    warmup=1,
    background=20,
)


def summarize(samples: list[float], wall: float | None = None) -> dict[str, Any]:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return {
        "ops": len(samples),
        "median_ms": round(statistics.median(ordered) * 1000, 4),
        "p90_ms": round(p90 * 1000, 4),
        "ops_per_s": round(len(samples) / (wall if wall else sum(samples)), 1),
    }


async def timed(
    op: Callable[[], Awaitable[Any]], profile: Profile, ops: int | None = None
) -> list[float]:
    for _ in range(profile.warmup):
        await op()
    samples: list[float] = []
    deadline = time.perf_counter() + profile.seconds
    for _ in range(ops or profile.ops):
        start = time.perf_counter()
        await op()
        samples.append(time.perf_counter() - start)
        if time.perf_counter() > deadline and len(samples) >= 3:
            break
    return samples


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def session_with(backend: Backend, size: int, prefix: str) -> Any:
    """A session of ``size`` items: one real item, then SQL copies of it."""
    session = await backend.make(new_id(prefix))
    await session.add_items([items.user_message("the template of a bulk-loaded history")])
    if size > 1:
        template = await asyncio.to_thread(max_id, backend.target, backend.items_table)
        await asyncio.to_thread(
            bulk_copy,
            backend.target,
            backend.items_table,
            template,
            size - 1,
            backend.order_column,
        )
    return session


async def run_all(backend: Backend, profile: Profile, log: Callable[[str], None]) -> dict[str, Any]:
    results: dict[str, Any] = {}

    async def record(name: str, coro: Awaitable[dict[str, Any]]) -> None:
        started = time.perf_counter()
        results[name] = await coro
        log(f"  {name}: {results[name]} ({time.perf_counter() - started:.1f}s)")

    await record("background_conversations", background(backend, profile))
    await record("add_items_2", add_items_2(backend, profile))
    large = await session_with(backend, profile.large, "large")
    await record("get_items_20_of_10k", read(large, 20, profile))
    await record("get_items_all_of_200", read_all_small(backend, profile))
    await record("pop_item", pop_item(backend, profile))
    await record("turn_x50_sessions", turns(backend, profile))
    await record("turns_8_concurrent", concurrent_turns(backend, profile))
    small = await session_with(backend, 100, "flat100")
    await record("flat_get_20_at_100", read(small, 20, profile))
    results["flat_get_20_at_10k"] = results["get_items_20_of_10k"]
    huge_started = time.perf_counter()
    huge = await session_with(backend, profile.huge, "huge")
    log(f"  bulk-loaded {profile.huge} items in {time.perf_counter() - huge_started:.1f}s")
    await record("flat_get_20_at_1m", read(huge, 20, profile))
    await record("memory_read_10k", memory_of_read(large))
    await record("compacting_turn", compacting_turns(backend, profile))
    return results


async def background(backend: Backend, profile: Profile) -> dict[str, Any]:
    """``profile.background`` conversations of one four-item exchange each (not timed)."""
    started = time.perf_counter()
    for _ in range(profile.background):
        session = await backend.make(new_id("background"))
        await session.add_items(items.history_chunk())
    return {"conversations": profile.background, "seconds": round(time.perf_counter() - started, 1)}


async def add_items_2(backend: Backend, profile: Profile) -> dict[str, Any]:
    session = await backend.make(new_id("add"))
    return summarize(await timed(lambda: session.add_items(items.turn_pair()), profile))


async def read(session: Any, limit: int, profile: Profile) -> dict[str, Any]:
    return summarize(await timed(lambda: session.get_items(limit=limit), profile))


async def read_all_small(backend: Backend, profile: Profile) -> dict[str, Any]:
    session = await backend.make(new_id("small"))
    for _ in range(profile.small // 4):
        await session.add_items(items.history_chunk())
    return summarize(await timed(lambda: session.get_items(), profile))


async def pop_item(backend: Backend, profile: Profile) -> dict[str, Any]:
    session = await backend.make(new_id("pop"))
    needed = profile.ops + profile.warmup
    for start in range(0, needed, 20):
        await session.add_items([items.marked(f"p{i}") for i in range(start, start + 20)])
    return summarize(await timed(session.pop_item, profile))


async def one_turn(session: Any) -> None:
    """What the Runner does per run: read the history, store the input, store the output."""
    await session.get_items()
    await session.add_items([items.user_message()])
    await session.add_items([items.assistant_message()])


async def turns(backend: Backend, profile: Profile) -> dict[str, Any]:
    sessions = [await backend.make(new_id("turn")) for _ in range(profile.sessions)]
    for session in sessions:
        await session.add_items(items.history_chunk())
    samples: list[float] = []
    deadline = time.perf_counter() + profile.seconds * 2
    for _ in range(profile.rounds):
        for session in sessions:
            start = time.perf_counter()
            await one_turn(session)
            samples.append(time.perf_counter() - start)
        if time.perf_counter() > deadline:
            break
    return summarize(samples)


async def concurrent_turns(backend: Backend, profile: Profile) -> dict[str, Any]:
    """``tasks`` tasks, each doing turns on its own session until the time is up.

    Besides the latency of all turns, it reports how many turns the slowest and the
    fastest task completed: a backend that lets some tasks starve while others run
    shows a low median over the turns that did complete, and a lopsided count here.
    """
    sessions = [await backend.make(new_id("conc")) for _ in range(profile.tasks)]
    for session in sessions:
        await session.add_items(items.history_chunk())
    samples: list[float] = []
    deadline = time.perf_counter() + profile.seconds

    async def worker(session: Any) -> int:
        turns = 0
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            await one_turn(session)
            samples.append(time.perf_counter() - start)
            turns += 1
        return turns

    started = time.perf_counter()
    per_task = await asyncio.gather(*(worker(s) for s in sessions))
    result = summarize(samples, wall=time.perf_counter() - started)
    result["slowest_task_turns"], result["fastest_task_turns"] = min(per_task), max(per_task)
    return result


async def memory_of_read(session: Any) -> dict[str, Any]:
    """Peak Python heap while reading the whole 10k-item session (tracemalloc)."""
    await session.get_items()  # warm caches and connections first
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = time.perf_counter()
        result = await session.get_items()
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {"items": len(result), "peak_kib": round(peak / 1024), "ms": round(elapsed * 1000, 1)}


async def compacting_turns(backend: Backend, profile: Profile) -> dict[str, Any]:
    """A Runner turn through the SDK's ``OpenAIResponsesCompactionSession`` that compacts
    after every turn, on a conversation that starts with 100 items, read with a limit of
    20 (each turn replaces the suffix the model saw with one summary).

    The compaction API is a stub that answers at once, so this is the store's share: the
    SDK's suffix snapshot and atomic replacement where the store has the hook
    (``_get_compaction_snapshot``; ``hook`` says whether it does), its generic
    clear-then-add path where it does not.
    """
    from types import SimpleNamespace

    from agents import Agent, Runner
    from agents.memory import OpenAIResponsesCompactionSession
    from agents.testing import ScriptedModel, assistant_message

    store = await session_with(backend, 100, "compact")
    store.session_settings = SessionSettings(limit=20)
    summary = {"type": "compaction", "id": "cmp", "encrypted_content": "summary"}

    async def compact(**kwargs: Any) -> Any:
        return SimpleNamespace(output=[summary], usage=None)

    client = SimpleNamespace(responses=SimpleNamespace(compact=compact))
    session = OpenAIResponsesCompactionSession(
        # The compaction call only: an AsyncOpenAI's one method the session uses.
        store.session_id,
        store,
        client=cast(Any, client),
        should_trigger_compaction=lambda _: True,
    )
    replies = [[assistant_message("ok")] for _ in range(profile.ops + profile.warmup)]
    agent = Agent(name="bench", model=ScriptedModel(replies))
    try:
        result = summarize(await timed(lambda: Runner.run(agent, "next", session=session), profile))
    except Exception as error:  # a backend without what the Runner needs
        return {"error": f"{type(error).__name__}: {error}"[:200]}
    hook = getattr(store, "_get_compaction_snapshot", None)
    result["hook"] = callable(hook) and await hook(1) is not None
    result["stored_items"] = len(await store.get_items())
    return result
