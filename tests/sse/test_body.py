"""``sse.body``: a response body's heartbeats, its end and its close (once, from any
thread)."""

from __future__ import annotations

import asyncio
import threading

from django_agent_sessions.sse import framing
from django_agent_sessions.sse.body import END, Body


async def test_a_heartbeat_when_nothing_else_is_written(settings):
    settings.AGENT_SESSIONS = {"SSE_HEARTBEAT_SECONDS": 0.01}
    body = Body()
    following = asyncio.Event()

    async def follow() -> None:
        following.set()
        await asyncio.Event().wait()  # follows until cancelled

    body.start(follow())
    assert await asyncio.wait_for(body.out.get(), 5) == framing.HEARTBEAT
    assert following.is_set()
    assert body.closing()
    await asyncio.gather(*body.tasks, return_exceptions=True)
    assert all(task.cancelled() for task in body.tasks)


async def test_the_end_follows_what_was_put():
    body = Body()
    body.put("data: 1\n\n")
    body.end()
    assert [body.out.get_nowait(), body.out.get_nowait()] == ["data: 1\n\n", END]


async def test_closed_once_from_another_thread():
    body, closes = Body(), []

    async def close() -> None:
        if body.closing():
            closes.append("closed")

    async def follow() -> None:
        await asyncio.Event().wait()

    body.start(follow(), heartbeats=False)
    threads = [threading.Thread(target=body.close_soon, args=(close,)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    while not body.tasks[0].done():
        await asyncio.sleep(0)
    for _turn in range(10):  # the other closes' turns
        await asyncio.sleep(0)
    assert closes == ["closed"]
    assert body.closing() is False


def test_a_body_never_started_closes_nothing_and_fails_nothing():
    body = Body()
    body.close_soon(lambda: asyncio.sleep(0))  # no loop yet: nothing to do
    assert body.closing()
    assert body.tasks == []
