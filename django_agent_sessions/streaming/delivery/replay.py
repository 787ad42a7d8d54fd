"""Exact resume: a tab that reconnects mid-run gets exactly the events it missed.

A tab knows the last ``<run_id>:<seq>`` it showed: a websocket reconnects with
``?resume=<run_id>:<seq>``, an SSE stream sends it as ``Last-Event-ID`` (the ``id:`` of
the last event it had; a ``history`` frame resets it). The run keeps every event it
published (``EventLog``; a run's size is bounded by ``MAX_RUN_BYTES``) and answers
``agent.replay`` with those after that ``seq``, wherever it runs. The tab sends
``resumed``, then the missed events, then the run's next ones, each once: its
``Sequencer`` merges the two. Anything else (the run is over, another run, an unknown
position, more than ``MAX_REPLAY_BYTES`` to send, no answer within
``CATCHUP_TIMEOUT_SECONDS``) gets the ``history`` frame, as a new tab does.
"""

from __future__ import annotations

import re
from typing import Any

from django_agent_sessions.streaming.wire.encoding import frame_size

# More than this is sent as a history frame instead: one layer message stays small.
MAX_REPLAY_BYTES = 512 * 1024
_POSITION = re.compile(r"^([0-9a-f-]{1,64}):(\d{1,9})$")


class EventLog:
    """The events a run published, in order."""

    def __init__(self) -> None:
        self._events: list[dict[str, Any]] = []

    def add(self, event: dict[str, Any]) -> None:
        self._events.append(event)

    @property
    def last_seq(self) -> int | None:
        """The ``seq`` of the last event published; None before the first."""
        return self._events[-1]["seq"] if self._events else None

    def after(self, seq: int) -> list[dict[str, Any]] | None:
        """The events after ``seq``; None when the log cannot say (it starts later:
        a run resumed after approvals) or they are too many to send."""
        missed = [event for event in self._events if event["seq"] > seq]
        first = self._events[0]["seq"] if self._events else None
        if first is None or first > seq + 1:
            return None
        if sum(frame_size(event) for event in missed) > MAX_REPLAY_BYTES:
            return None
        return missed


def position(text: str | None) -> tuple[str, int] | None:
    """``(run_id, seq)`` from ``<run_id>:<seq>``; None for anything else."""
    found = _POSITION.match((text or "").strip())
    return None if found is None else (found.group(1), int(found.group(2)))
