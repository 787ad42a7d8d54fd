"""Putting a run's events back in order before they reach a socket.

The channel layer does not promise order: channels_redis queues messages in a sorted
set scored by send time, so two events sent within the same clock tick may arrive
swapped, and ``group_send`` drops messages past a channel's capacity. Every event
carries its run's ``seq``; a socket relays them strictly in order and holds early ones
back until the gap is filled; a gap that stays open makes the socket recover what it
missed (``relay``, ``watch``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Event = dict[str, Any]
# A run's end is never dropped for its seq: a lost worker's end is numbered from the
# worker's last lease renewal, which may be behind what a tab was sent (the tab's
# ``watch.Watch`` shows each end once).
_ENDS = frozenset({"run.completed", "run.cancelled", "run.failed"})


class Sequencer:
    """Per-run ordering of events for one socket."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}
        self._held: dict[str, dict[int, Event]] = {}

    def expect(self, run_id: str, next_seq: int) -> None:
        """The socket already has everything before ``next_seq`` (from a snapshot).

        Never back: a history frame may show more of a run (its approval requests, from
        the stored pause) than the snapshot that came with it.
        """
        next_seq = max(next_seq, self._next.get(run_id, 1))
        self._next[run_id] = next_seq
        held = self._held.get(run_id, {})
        for seq in [seq for seq in held if seq < next_seq]:
            del held[seq]

    def push(self, event: Event) -> list[Event]:
        """The events that may be sent now, in order (possibly none)."""
        run_id, seq = event.get("run_id"), event.get("seq")
        if not isinstance(run_id, str) or not isinstance(seq, int):
            return [event]
        expected = self._next.setdefault(run_id, 1)
        if seq < expected:
            # Already sent, or part of the snapshot the socket has; an end, once.
            return [event] if event.get("type") in _ENDS else []
        self._held.setdefault(run_id, {})[seq] = event
        return self._ready(run_id)

    def is_behind(self, run_id: str, seq: int, *, holding: Iterable[Event] = ()) -> bool:
        """Whether the socket has yet to send the run's events up to ``seq``.

        ``holding``: events the socket holds elsewhere (a catch-up's buffer), counted as
        had: a tab whose held events fill every gap up to ``seq`` missed nothing.
        """
        next_seq = self._next.get(run_id, 1)
        held = [event for event in holding if event.get("run_id") == run_id]
        if next_seq > seq or not held:
            return next_seq <= seq
        had = {event.get("seq") for event in held} | set(self._held.get(run_id, {}))
        return not had.issuperset(range(next_seq, seq + 1))

    def has_gap(self, run_id: str) -> bool:
        return bool(self._held.get(run_id))

    def release(self, run_id: str) -> list[Event]:
        """What is held and may be sent now (after ``expect``), in order."""
        if not self._held.get(run_id):
            return []
        return self._ready(run_id)

    def _ready(self, run_id: str) -> list[Event]:
        held = self._held[run_id]
        ready = []
        while self._next[run_id] in held:
            ready.append(held.pop(self._next[run_id]))
            self._next[run_id] += 1
        if not held:
            del self._held[run_id]
        return ready
