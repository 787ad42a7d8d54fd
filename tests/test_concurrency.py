"""Concurrent writers on one conversation, with separate connections.

Threads each run their own event loop (as ``Runner.run_sync`` does) with
``THREAD_SENSITIVE`` off, so every thread has its own database connection; one test
uses separate processes. A control runs the same checker against a deliberately
unlocked pop, to show the checker does catch lost or duplicated items.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings

from django_agent_sessions import DjangoSession
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession, SessionItem
from tests.conftest import user_message
from tests.processes import json_lists_from

pytestmark = [
    pytest.mark.long(20),
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("_separate_connections"),
]

WORKERS = 8


@pytest.fixture
def _separate_connections():
    with override_settings(AGENT_SESSIONS={"THREAD_SENSITIVE": False}):
        yield


def in_threads(worker: Callable[[int], Awaitable[Any]], count: int = WORKERS) -> list[Any]:
    """Run ``worker(i)`` in ``count`` threads, each with its own loop, started together."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def run(index: int) -> None:
        async def main() -> Any:
            barrier.wait()
            return await worker(index)

        try:
            results[index] = asyncio.run(main())
        except BaseException as error:
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    if errors:
        raise errors[0]
    return results


def fill(session_id: str, count: int) -> list[str]:
    texts = [f"item {i}" for i in range(count)]
    asyncio.run(DjangoSession(session_id).add_items([user_message(t) for t in texts]))
    return texts


def pop_all_concurrently(pop: Callable[[str], Awaitable[Any]], session_id: str) -> list[str]:
    async def worker(_: int) -> list[str]:
        popped = []
        while (item := await pop(session_id)) is not None:
            popped.append(item["content"])
        return popped

    return [text for texts in in_threads(worker) for text in texts]


def problems(expected: list[str], popped: list[str]) -> dict[str, Any]:
    counts = Counter(popped)
    return {
        "duplicated": sorted(t for t, n in counts.items() if n > 1),
        "lost": sorted(set(expected) - set(counts)),
    }


async def django_pop(session_id: str) -> Any:
    return await DjangoSession(session_id).pop_item()


def _naive_pop_sync(session_id: str) -> Any:
    # What an unlocked implementation does: read the newest row, then delete it.
    row = (
        SessionItem.objects.filter(session__session_id=session_id)
        .order_by("-id")
        .values_list("id", "payload")
        .first()
    )
    if row is None:
        return None
    time.sleep(0.002)  # widen the race window so the control fails reliably
    SessionItem.objects.filter(id=row[0]).delete()
    return json.loads(row[1])


async def naive_pop(session_id: str) -> Any:
    return await asyncio.to_thread(_naive_pop_sync, session_id)


def test_concurrent_pops_never_duplicate_or_lose(session_id):
    expected = fill(session_id, 240)
    popped = pop_all_concurrently(django_pop, session_id)
    assert problems(expected, popped) == {"duplicated": [], "lost": []}
    assert len(popped) == len(expected)
    assert AgentSession.objects.get(session_id=session_id).item_count == 0


def test_control_the_checker_catches_an_unlocked_pop(session_id):
    expected = fill(session_id, 240)
    popped = pop_all_concurrently(naive_pop, session_id)
    assert problems(expected, popped)["duplicated"], "the checker could not fail"


def test_concurrent_batches_stay_contiguous_and_ordered(session_id):
    batches, size = 12, 5

    async def worker(index: int) -> None:
        session = DjangoSession(session_id)
        for batch in range(batches):
            await session.add_items([user_message(f"{index}:{batch}:{n}") for n in range(size)])

    in_threads(worker)
    stored = [item["content"] for item in asyncio.run(DjangoSession(session_id).get_items())]
    assert len(stored) == WORKERS * batches * size
    for start in range(0, len(stored), size):
        chunk = [tuple(map(int, text.split(":"))) for text in stored[start : start + size]]
        assert {(w, b) for w, b, _ in chunk} == {chunk[0][:2]}, f"interleaved at {start}"
        assert [n for _, _, n in chunk] == list(range(size))
    for worker_index in range(WORKERS):
        order = [text for text in stored if text.startswith(f"{worker_index}:")]
        assert order == sorted(order, key=lambda t: tuple(map(int, t.split(":"))))
    assert AgentSession.objects.get(session_id=session_id).item_count == len(stored)


def test_concurrent_first_writers_create_one_row(session_id):
    async def worker(index: int) -> None:
        await DjangoSession(session_id).add_items([user_message(f"first {index}")])

    in_threads(worker)
    assert AgentSession.objects.filter(session_id=session_id).count() == 1
    assert SessionItem.objects.filter(session__session_id=session_id).count() == WORKERS


def test_racing_owners_one_wins_the_others_are_refused(session_id, django_user_model):
    users = [django_user_model.objects.create_user(f"user{i}") for i in range(WORKERS)]

    async def worker(index: int) -> str:
        try:
            await DjangoSession(session_id, owner=users[index]).add_items(
                [user_message(f"from {index}")]
            )
        except SessionOwnershipError:
            return "refused"
        return "stored"

    outcomes = in_threads(worker)
    assert sorted(outcomes) == ["refused"] * (WORKERS - 1) + ["stored"]
    row = AgentSession.objects.get(session_id=session_id)
    winner = outcomes.index("stored")
    assert row.owner_id == users[winner].pk
    assert [i.data["content"] for i in SessionItem.objects.all()] == [f"from {winner}"]


WORKER_SCRIPT = """
import asyncio, json, sys
import django
django.setup()
from django_agent_sessions import DjangoSession

async def main():
    session = DjangoSession(sys.argv[1])
    popped = []
    while (item := await session.pop_item()) is not None:
        popped.append(item["content"])
    return popped

print(json.dumps(asyncio.run(main())))
"""


def test_concurrent_pops_from_separate_processes(session_id):
    expected = fill(session_id, 200)
    popped = json_lists_from(WORKER_SCRIPT, session_id, processes=4)
    assert problems(expected, popped) == {"duplicated": [], "lost": []}
