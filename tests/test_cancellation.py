"""A caller cancelled during a write still gets the write's real outcome.

When ``CancelledError`` reaches the caller, the write has already committed (never
"cancelled" while it commits later), and a write still queued behind other work is
not silently dropped. Each test checks the database from another thread and
connection the moment the cancellation arrives.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions.models import SessionItem
from tests.conftest import user_message

pytestmark = pytest.mark.django_db(transaction=True)


def stored_count_elsewhere() -> int:
    def count() -> int:
        from django.db import connections

        try:
            return SessionItem.objects.count()
        finally:
            connections.close_all()

    return count()


async def count_now() -> int:
    return await asyncio.to_thread(stored_count_elsewhere)


async def cancel_soon(task: asyncio.Task) -> None:
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def test_a_write_queued_behind_other_work_is_not_dropped(make_session):
    session = make_session()
    # Occupy the shared sync thread, so the write waits in its queue when cancelled.
    blocker = asyncio.ensure_future(sync_to_async(time.sleep)(0.3))
    await asyncio.sleep(0)
    await cancel_soon(asyncio.ensure_future(session.add_items([user_message("queued")])))
    assert await count_now() == 1
    await blocker


async def test_a_write_in_flight_has_committed_when_cancellation_arrives(make_session):
    session = make_session()
    batch = [user_message(f"item {i} " + "x" * 2000) for i in range(3000)]
    await cancel_soon(asyncio.ensure_future(session.add_items(batch)))
    assert await count_now() == len(batch)


async def test_repeated_cancellation_still_waits_for_the_write(make_session):
    session = make_session()
    task = asyncio.ensure_future(session.add_items([user_message("x")] * 500))
    for _ in range(3):
        await asyncio.sleep(0)
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await count_now() == 500


async def test_cancelled_pop_removes_exactly_one_item(make_session):
    session = make_session()
    await session.add_items([user_message(str(i)) for i in range(3)])
    blocker = asyncio.ensure_future(sync_to_async(time.sleep)(0.3))
    await asyncio.sleep(0)
    await cancel_soon(asyncio.ensure_future(session.pop_item()))
    assert await count_now() == 2
    await blocker
    assert [i["content"] for i in await session.get_items()] == ["0", "1"]


async def test_cancelled_clear_completes(make_session):
    session = make_session()
    await session.add_items([user_message("a")])
    blocker = asyncio.ensure_future(sync_to_async(time.sleep)(0.3))
    await asyncio.sleep(0)
    await cancel_soon(asyncio.ensure_future(session.clear_session()))
    assert await count_now() == 0
    await blocker
