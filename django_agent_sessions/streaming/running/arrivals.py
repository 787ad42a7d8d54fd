"""The messages of this process waiting for their reply's first token, in arrival order.

A message's way from its frame to its reply's first token is several hops: admission
(the rate limit, the budget), the run's record, the saved input, the history read. A
title is written only once every message that arrived before it was ready has its first
token (or was refused, or its run left without one): its write and broadcast would
otherwise join the hops those messages wait for, and when many people answer at once,
every title lands among every start (measured: the titles benchmark,
``benchmarks/README.md``, 1.57x at 200 chats when a title waited for its own
conversation's next reply only). Messages that arrive after the title was ready are not
waited for, so a busy worker delays a title by its replies' time to first token, never
for good. Only this process's messages are known here: one of another process waits for
none of this process's hops.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
from collections.abc import Callable, Iterator

from django_agent_sessions.streaming.running.active_runs import ActiveRun, local_run

_numbers = itertools.count()
_last = -1  # the number of the newest message
_unanswered: set[int] = set()
_waiters: list[tuple[int, int, asyncio.Future[None]]] = []  # (newest waited for, tie, ...)
_kept: set[asyncio.Task[None]] = set()  # waits for first tokens (kept from garbage collection)


@contextlib.contextmanager
def on_its_way(conversation_pk: Callable[[], int | None]) -> Iterator[None]:
    """While a message is admitted, recorded and started (or refused), then until the
    conversation's run in this process (``conversation_pk()``, known once the
    conversation is) has its first token or leaves."""
    global _last
    number = _last = next(_numbers)
    _unanswered.add(number)
    try:
        yield
    finally:
        pk = conversation_pk()
        run = local_run(pk) if pk is not None else None
        if run is None or run.answered.is_set():
            _answered(number)
        else:
            kept = asyncio.get_running_loop().create_task(_when_answered(run, number))
            _kept.add(kept)
            kept.add_done_callback(_kept.discard)


async def earlier_answered() -> None:
    """Once every message that arrived before this call has its first token (or left)."""
    newest = _last
    if min(_unanswered, default=newest + 1) > newest:
        return
    waiter = asyncio.get_running_loop().create_future()
    heapq.heappush(_waiters, (newest, id(waiter), waiter))
    await waiter


async def _when_answered(run: ActiveRun, number: int) -> None:
    try:
        await run.answered.wait()
    finally:
        _answered(number)


def _answered(number: int) -> None:
    _unanswered.discard(number)
    oldest = min(_unanswered, default=_last + 1)
    while _waiters and _waiters[0][0] < oldest:
        _newest, _tie, waiter = heapq.heappop(_waiters)
        if not waiter.done() and not waiter.get_loop().is_closed():
            waiter.set_result(None)
