"""Messages on their way to a run in this process, by conversation.

A message's way from its frame to its run's first token is several hops: admission
(the rate limit, the budget), the run's record, the history read. A title ready while
that conversation's next message is on this way (the person answered at once) waits
for the message to arrive, then for its reply's first token (``titling``): its write
and broadcast would otherwise join the hops the message waits for, when every person
who answered at once starts at the same moment (measured: the titles benchmark,
``benchmarks/README.md``). Only this process's messages are known here; one of another
process waits for none of this process's hops.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator


class _Arrival:
    """The messages of one conversation on their way, and when the last has arrived."""

    def __init__(self) -> None:
        self.count = 0
        self.arrived = asyncio.Event()


_arrivals: dict[int, _Arrival] = {}


@contextlib.contextmanager
def on_its_way(session_pk: int | None) -> Iterator[None]:
    """While a message to the conversation is admitted, recorded and started (or
    refused); a new conversation (None) has nothing to wait for it."""
    if session_pk is None:
        yield
        return
    arrival = _arrivals.setdefault(session_pk, _Arrival())
    arrival.count += 1
    try:
        yield
    finally:
        arrival.count -= 1
        if arrival.count == 0:
            del _arrivals[session_pk]
            arrival.arrived.set()


async def all_arrived(session_pk: int) -> None:
    """Once no message to the conversation is on its way in this process."""
    arrival = _arrivals.get(session_pk)
    if arrival is not None:
        await arrival.arrived.wait()
