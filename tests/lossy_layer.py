"""A channel layer that loses and delays messages, as a real one may.

Channel layers deliver at most once: channels_redis drops a message for a full or
vanished channel, and a Redis restart loses whatever was in flight. This layer is
channels_redis with that made frequent and reproducible: a fraction ``drop`` of the
messages whose type is in ``types`` is never sent, and a fraction ``delay`` is sent
``delay_seconds`` late (so it arrives after later ones: reordered). The worker processes
of ``tests/streaming/running/test_lost_messages.py`` use it through ``AGENT_SESSIONS_TEST_LOSS``
(``tests/settings.py``); ``tests/streaming/following/test_watch_deaf_layer.py`` in its own process,
with ``drop`` raised to 1 mid-run (a layer that never delivers again).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Iterable
from typing import Any

from channels_redis.core import RedisChannelLayer

logger = logging.getLogger(__name__)

# What is lost: a run's events and the catch-up's own question and answer (the tab's
# recovery must not depend on them). Group membership, creation and presence messages
# are kept: their loss is another subject (a new conversation's tabs, presence checks).
LOSSY_TYPES = ("agent.event", "agent.catchup", "agent.snapshot")


class LossyRedisChannelLayer(RedisChannelLayer):  # type: ignore[misc]
    def __init__(
        self,
        *args: Any,
        drop: float = 0.0,
        delay: float = 0.0,
        delay_seconds: float = 0.05,
        types: Iterable[str] = LOSSY_TYPES,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.drop, self.delay, self.delay_seconds = drop, delay, delay_seconds
        self.types = frozenset(types)
        self.random = random.Random(seed)
        self.dropped = 0
        self.on_drop: Callable[[dict[str, Any]], None] | None = None  # told of each loss
        self._late: set[asyncio.Task[None]] = set()

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        await self._pass(message, super().send, channel)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await self._pass(message, super().group_send, group)

    async def _pass(self, message: dict[str, Any], send: Any, to: str) -> None:
        if message.get("type") in self.types:
            chance = self.random.random()
            if chance < self.drop:
                self.dropped += 1
                if self.on_drop is not None:
                    self.on_drop(message)
                if self.dropped % 10 == 1:
                    logger.warning("The lossy layer dropped %d messages.", self.dropped)
                return
            if chance < self.drop + self.delay:
                task = asyncio.ensure_future(self._later(send, to, message))
                self._late.add(task)
                task.add_done_callback(self._late.discard)
                return
        await send(to, message)

    async def _later(self, send: Any, to: str, message: dict[str, Any]) -> None:
        await asyncio.sleep(self.delay_seconds)
        await send(to, message)
