"""``store.hops``: the async face of a store operation, one hop into its sync function.

A hop runs the function on the sync thread (where Django's async ORM runs its queries),
keeps the function at ``.sync`` and its name and docstring, and, for a write, lets the
write finish before a cancellation reaches the caller.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from django.db import InterfaceError, OperationalError

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import hops, pending


def add(a: int, b: int = 0) -> tuple[int, int]:
    """Adds, and says on which thread."""
    return a + b, threading.get_ident()


def test_a_hop_keeps_its_function_name_and_docstring() -> None:
    hopped = hops.hop(add)
    assert isinstance(hopped, hops.Hop)
    assert hopped.sync is add  # sync callers (commands, tests) call it directly
    # functools.update_wrapper copies them onto the instance (the type does not declare it).
    assert (hopped.__name__, hopped.__doc__) == ("add", add.__doc__)  # type: ignore[attr-defined]
    # With arguments, the decorator form; a read by default.
    assert hops.hop(write=True)(add).sync is add
    # What a hop raises while the database is unreachable, for callers to retry.
    assert set(hops.UNAVAILABLE) == {OperationalError, InterfaceError}


@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
async def test_a_hop_runs_its_function_on_the_sync_thread(write: bool) -> None:
    hopped = hops.hop(write=write)(add)
    total, thread = await hopped(2, b=3)
    assert total == 5
    assert thread != threading.get_ident()  # not on the event loop's thread
    # The thread Django's own async ORM (sync_to_async) would use.
    assert thread == await sync_to_async(threading.get_ident)()


async def test_a_cancelled_write_finishes_before_its_caller_hears_of_it() -> None:
    started, release = threading.Event(), threading.Event()
    events: list[str] = []

    def slow_write() -> None:
        started.set()
        release.wait(timeout=30)  # a bound in case the test is broken, never a delay
        events.append("write finished")

    async def caller() -> None:
        try:
            await hops.hop(write=True)(slow_write)()
        except asyncio.CancelledError:
            events.append("caller cancelled")
            raise

    task = asyncio.ensure_future(caller())
    assert await asyncio.to_thread(started.wait, 30)
    task.cancel()
    # One turn of the loop (not a delay): the task's wake-up runs before this one's, so a
    # hop that did not wait for its write would have told the caller by now.
    await asyncio.sleep(0)
    assert events == []
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert events == ["write finished", "caller cancelled"]


async def test_a_cancelled_read_does_not_wait() -> None:
    started, release = threading.Event(), threading.Event()

    def slow_read() -> None:
        started.set()
        release.wait(timeout=30)

    task = asyncio.ensure_future(hops.hop(slow_read)())
    assert await asyncio.to_thread(started.wait, 30)
    task.cancel()
    try:
        with pytest.raises(asyncio.CancelledError):
            await task  # while the read is still blocked
    finally:
        release.set()


@pytest.mark.django_db(transaction=True)
async def test_the_async_face_of_a_store_read_answers_as_its_sync_function(
    session_id: str,
) -> None:
    conversation = await AgentSession.objects.acreate(session_id=session_id)
    run = await AgentRun.objects.acreate(session=conversation, status="completed", event_seq=4)
    expected = ("completed", 4)
    assert await pending.progress(conversation.pk, str(run.run_id)) == expected
    assert await sync_to_async(pending.progress.sync)(conversation.pk, str(run.run_id)) == expected
