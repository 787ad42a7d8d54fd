"""The pages open on a temporary chat: counted in, counted out, and the chat removed
once the last one has been gone for ``TEMPORARY_GRACE_SECONDS``.

Each tab that follows a temporary chat counts itself in the conversation's row when it
joins and out when it closes, whichever transport carries it (a websocket's disconnect,
an event stream's end); the row is the one count every worker sees
(``store.temporary``). When a close leaves no page, this process waits the grace and
then asks the store to remove the chat if still no page came back (a reload, a stream
that reconnects, a worker that drains) and no run holds it. A process that stops before
its timer fires leaves the removal to the sweep (``running.lost``), which removes a chat
left for longer than the grace, and any temporary chat past ``TEMPORARY_TTL``.

Counting in runs beside the tab's first frames, never before them: a tab's first
message is on the path to its first token. Counting out waits for it.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

from django_agent_sessions.store import temporary as store_temporary
from django_agent_sessions.temporary.settings import grace_seconds

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

# The removals waiting out their grace in this process (kept from the garbage collector).
_waiting: set[asyncio.Task[None]] = set()


class Presence:
    """One tab's count in a temporary chat: ``opened`` when it joins, ``closed`` once."""

    def __init__(self) -> None:
        self._counted: asyncio.Task[bool] | None = None
        self._conversation_pk: int | None = None

    def opened(self, conversation_pk: int) -> None:
        """The tab joined ``conversation_pk``, a temporary chat (or maybe one: the
        store counts it only if it is)."""
        if self._conversation_pk is not None:
            return
        self._conversation_pk = conversation_pk
        self._counted = _detached(store_temporary.page_opened(conversation_pk))

    async def closed(self) -> None:
        """The tab left: count it out; the last one out starts the grace."""
        counted, self._counted = self._counted, None
        if counted is None or self._conversation_pk is None:
            return
        try:
            if not await counted:
                return  # not a temporary chat, or gone
            left = await store_temporary.page_closed(self._conversation_pk)
        except Exception:
            logger.exception("Could not count a page out of a temporary chat.")
            return  # the sweep removes it at TEMPORARY_TTL
        if left == 0:
            remove_after_grace(self._conversation_pk)


def remove_after_grace(conversation_pk: int) -> None:
    """After the grace, remove the chat if no page came back and no run holds it."""
    task = _detached(_remove_later(conversation_pk, grace_seconds()))
    _waiting.add(task)
    task.add_done_callback(_waiting.discard)


async def _remove_later(conversation_pk: int, grace: float) -> None:
    await asyncio.sleep(grace)
    try:
        await store_temporary.remove_if_left(conversation_pk, grace)
    except Exception:
        logger.exception("Could not remove a temporary chat; the sweep will.")


def _detached(coroutine: Coroutine[Any, Any, _T]) -> asyncio.Task[_T]:
    """A task in a context of its own: it outlives the tab (its hops must not use the
    finished request's thread; see ``running.lost``)."""
    loop = asyncio.get_running_loop()
    task: asyncio.Task[_T] = contextvars.Context().run(loop.create_task, coroutine)
    return task


async def settled() -> None:
    """Wait for every removal waiting out its grace here (tests, and a worker's end)."""
    while _waiting:
        await asyncio.gather(*list(_waiting), return_exceptions=True)
