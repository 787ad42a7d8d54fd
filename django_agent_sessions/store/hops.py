"""The async face of a store operation: one hop, as channels' ``database_sync_to_async``.

``@hop`` turns a sync store function into an awaitable one that makes exactly one hop
through ``bridge`` into it, with stale connections replaced around it (websocket
consumers and runs outlive any request, so Django's per-request cleanup never runs for
them). ``@hop(write=True)``: the write's real outcome survives the caller's
cancellation (``bridge.run_to_completion``). The sync function stays at ``.sync``, for
sync callers (management commands) and tests; ``.here`` runs it on the calling thread
with the same care for connections.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Generic, ParamSpec, TypeVar, overload

from django.db import InterfaceError, OperationalError

from django_agent_sessions.store import bridge
from django_agent_sessions.store.health import with_fresh_connections

# What a hop raises while the database is unreachable (a restart, a broken connection):
# the next hop reconnects, so an operation worth finishing is tried again.
UNAVAILABLE = (OperationalError, InterfaceError)

_T = TypeVar("_T")
_P = ParamSpec("_P")


class Hop(Generic[_P, _T]):
    """An awaitable store operation; ``sync`` is the function it hops into."""

    def __init__(self, function: Callable[_P, _T], *, write: bool) -> None:
        self.sync = function
        self._fresh = with_fresh_connections(function)
        self._write = write
        functools.update_wrapper(self, function)

    def here(self, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """The operation on the calling sync thread and its connection, stale or broken
        connections replaced around it, as a hop does: for sync code that outlives any
        request (a task worker's task)."""
        return self._fresh(*args, **kwargs)

    async def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        call = functools.partial(self._fresh, *args, **kwargs)
        if self._write:
            return await bridge.run_to_completion(call)
        return await bridge.run(call)


@overload
def hop(function: Callable[_P, _T], /) -> Hop[_P, _T]: ...
@overload
def hop(*, write: bool = False) -> Callable[[Callable[_P, _T]], Hop[_P, _T]]: ...
def hop(
    function: Callable[_P, _T] | None = None, /, *, write: bool = False
) -> Hop[_P, _T] | Callable[[Callable[_P, _T]], Hop[_P, _T]]:
    if function is not None:
        return Hop(function, write=write)
    return lambda inner: Hop(inner, write=write)
