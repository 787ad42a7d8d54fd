"""The SDK's side of a ``StreamedRun``: ``Runner.run_streamed``, started, and the task
that moves its stream events into the run's queue, where the run translates them.

Kept apart from the translation so that each reads on its own: this module knows the
SDK's streaming API; ``streamed_run`` knows the wire.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Runner

from django_agent_sessions.conf import app_settings
from django_agent_sessions.streaming.running.queued import End


class SdkRun:
    """One ``Runner.run_streamed`` whose events go into ``queue``, then an ``End``."""

    def __init__(self, queue: asyncio.Queue[Any]) -> None:
        self.queue = queue
        self.result: Any = None  # the SDK's RunResultStreaming, once begun
        self.task: asyncio.Task[End] | None = None

    def begin(self, *args: Any, cancelled: bool = False, **options: Any) -> Exception | None:
        """Start ``Runner.run_streamed(*args, **options)`` and its pump; what starting it
        raised, if it did (the run reports it after its first events)."""
        try:
            self.result = Runner.run_streamed(*args, **options)
        except Exception as error:
            return error
        if cancelled:
            self.result.cancel(mode="immediate")
        self.task = asyncio.create_task(self._pump())
        return None

    def cancel(self) -> None:
        if self.result is not None and not self.result.is_complete:
            self.result.cancel(mode="immediate")

    def end(self) -> End:
        """How the SDK's stream ended (after ``stop``)."""
        if self.task is None or self.task.cancelled():
            return End()
        return self.task.result()

    async def stop(self) -> None:
        """Cancel the SDK run if it is still going, and let it settle its saves."""
        if self.task is None or self.task.done():
            return
        self.cancel()
        await asyncio.wait({self.task}, timeout=float(app_settings.SETTLE_SECONDS))
        if not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def _pump(self) -> End:
        try:
            async for event in self.result.stream_events():
                self.queue.put_nowait(event)
        except Exception as error:
            end = End(error)
        else:
            end = End()
        self.queue.put_nowait(end)
        return end
