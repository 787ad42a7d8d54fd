"""``run_to_completion``: a cancelled caller never hides a write, and no write runs twice."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions.store.bridge import run, run_to_completion


class Recorder:
    def __init__(self, seconds: float = 0.0, error: Exception | None = None) -> None:
        self.seconds, self.error = seconds, error
        self.calls: list[str] = []
        self.finished = threading.Event()

    def __call__(self, tag: str) -> str:
        self.calls.append(tag)
        time.sleep(self.seconds)
        self.finished.set()
        if self.error is not None:
            raise self.error
        return tag


async def cancelled(task: asyncio.Task, *, times: int = 1) -> None:
    for _ in range(times):
        await asyncio.sleep(0.02)
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_result_comes_back():
    assert await run_to_completion(Recorder(), "a") == "a"
    assert await run(Recorder(), "b") == "b"


async def test_a_write_still_queued_when_cancelled_runs_once_before_the_caller_hears():
    write = Recorder()
    blocker = asyncio.ensure_future(sync_to_async(time.sleep)(0.2))
    await asyncio.sleep(0)
    await cancelled(asyncio.ensure_future(run_to_completion(write, "queued")))
    assert write.finished.is_set()
    await blocker
    await asyncio.sleep(0.05)  # the original queue entry, had it survived, would run now
    assert write.calls == ["queued"]


async def test_a_running_write_is_waited_for_through_repeated_cancellation():
    write = Recorder(seconds=0.2)
    await cancelled(asyncio.ensure_future(run_to_completion(write, "running")), times=3)
    assert write.finished.is_set()
    assert write.calls == ["running"]


async def test_a_cancelled_caller_sees_the_cancellation_not_the_write_error():
    write = Recorder(seconds=0.1, error=RuntimeError("refused"))
    await cancelled(asyncio.ensure_future(run_to_completion(write, "failing")))
    assert write.calls == ["failing"]


async def test_without_cancellation_a_write_error_reaches_the_caller():
    with pytest.raises(RuntimeError, match="refused"):
        await run_to_completion(Recorder(error=RuntimeError("refused")), "failing")
