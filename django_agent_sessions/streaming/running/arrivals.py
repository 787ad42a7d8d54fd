"""The messages of this process waiting for their reply's first token, and the quiet
turns that titles take between them.

A message's way from its frame to its reply's first token is several hops: admission
(the rate limit, the budget), the run's record, the saved input, the history read. A
title's write and broadcast would join the hops those messages wait for: when many
people answer at once, every title lands among every start (measured: the titles
benchmark, ``benchmarks/README.md``: 1.57x at 200 chats when a title waited for its own
conversation's next reply only, 1.13x when it waited for the messages that arrived
before it was ready). So a title is written in a **quiet turn**: once no message of this
process waits for its first token (or was refused, or its run left without one), one
title at a time, the next only when the worker is quiet again. A worker never quiet
delays a title by the caller's bound (``TITLE_WAIT_SECONDS``), never for good. Only this
process's messages are known here: one of another process waits for none of this
process's hops.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator

from django_agent_sessions.streaming.running.active_runs import ActiveRun, local_run

_unanswered = 0  # messages of this process waiting for their reply's first token
_turn_held = False
_turns: collections.deque[asyncio.Future[None]] = collections.deque()  # waiting in line
_kept: set[asyncio.Task[None]] = set()  # waits for first tokens (kept from garbage collection)


@contextlib.contextmanager
def on_its_way(conversation_pk: Callable[[], int | None]) -> Iterator[None]:
    """While a message is admitted, recorded and started (or refused), then until the
    conversation's run in this process (``conversation_pk()``, known once the
    conversation is) has its first token or leaves."""
    global _unanswered
    _unanswered += 1
    try:
        yield
    finally:
        pk = conversation_pk()
        run = local_run(pk) if pk is not None else None
        if run is None or run.answered.is_set():
            _answered()
        else:
            kept = asyncio.get_running_loop().create_task(_when_answered(run))
            _kept.add(kept)
            kept.add_done_callback(_kept.discard)


@contextlib.asynccontextmanager
async def quiet_turn(wait_at_most: float) -> AsyncIterator[bool]:
    """Hold the quiet turn: wait until no message of this process waits for its first
    token and no one else holds the turn, or for ``wait_at_most`` seconds (then go on
    without it). Yields whether the turn was had."""
    turn = await _queued_for_turn(wait_at_most)
    try:
        yield turn
    finally:
        if turn:
            _release_turn()


async def _queued_for_turn(wait_at_most: float) -> bool:
    """Wait in line for the turn; whether it was given within ``wait_at_most``."""
    waiter = asyncio.get_running_loop().create_future()
    _turns.append(waiter)
    _pass_turn()
    if waiter.done():  # quiet, and nobody in line or holding it: no loop turn spent
        return True
    try:
        await asyncio.wait_for(asyncio.shield(waiter), wait_at_most)
    except asyncio.TimeoutError:
        pass
    except asyncio.CancelledError:
        if waiter.done() and not waiter.cancelled():  # given, but its caller is gone
            _release_turn()
        raise
    finally:
        if not waiter.done():  # no longer in line: ``_pass_turn`` skips it
            waiter.cancel()
    return not waiter.cancelled()


def _release_turn() -> None:
    global _turn_held
    _turn_held = False
    _pass_turn()


def _pass_turn() -> None:
    """Give the turn to the next in line, if nobody holds it and no message waits."""
    global _turn_held
    if _turn_held or _unanswered:
        return
    while _turns:
        waiter = _turns.popleft()
        if not waiter.done() and not waiter.get_loop().is_closed():
            _turn_held = True
            waiter.set_result(None)
            return


async def _when_answered(run: ActiveRun) -> None:
    try:
        await run.answered.wait()
    finally:
        _answered()


def _answered() -> None:
    global _unanswered
    _unanswered -= 1
    _pass_turn()
