"""The ``text/event-stream`` form of the wire's frames.

Each frame is one event: ``event:`` its type, ``data:`` its JSON on one line, and for a
run's numbered events ``id: <run_id>:<seq>`` (the browser sends the last one back as
``Last-Event-ID`` when it reconnects, and the stream resumes there: ``streaming.replay``).
A comment line is a heartbeat: proxies that close silent connections (nginx after 60 s)
see traffic, and the browser sees nothing.
"""

from __future__ import annotations

import random
from typing import Any

from django_agent_sessions.streaming import encoding

HEARTBEAT = ": ping\n\n"
# How long the browser waits before reconnecting a stream that ended, in milliseconds:
# at least RECONNECT_MS, spread over RECONNECT_SPREAD_MS more so that the streams a
# restarted server dropped do not all come back at the same instant.
RECONNECT_MS = 1000
RECONNECT_SPREAD_MS = 1000


def opening() -> str:
    """The first bytes of every stream: its reconnect delay (and a first flush)."""
    spread = random.randrange(RECONNECT_SPREAD_MS)  # noqa: S311 - a delay, not a secret
    return f"retry: {RECONNECT_MS + spread}\n\n"


def restart() -> str:
    """The last bytes of a stream whose worker stops: reconnect soon (to another one)."""
    spread = random.randrange(RECONNECT_SPREAD_MS // 2)  # noqa: S311 - a delay, not a secret
    return f"retry: {100 + spread}\n\n"


def event_text(frame: dict[str, Any]) -> str:
    """One frame as an event (``encoding.frame_text`` has no line breaks: JSON escapes them)."""
    lines = []
    event_id = frame_id(frame)
    if event_id or frame["type"] == "history":
        # A history frame sets (or, with no run in flight, clears) where a reconnecting
        # browser resumes from: what it had before is in the frame.
        lines.append(f"id: {event_id}")
    lines.append(f"event: {frame['type']}")
    lines.append(f"data: {encoding.frame_text(frame)}")
    return "\n".join(lines) + "\n\n"


def frame_id(frame: dict[str, Any]) -> str:
    """``<run_id>:<seq>`` for a run's numbered events, else empty (no ``id:`` line: the
    browser keeps the last one it had)."""
    if frame.get("type") == "history":
        frame = frame.get("active_run") or {}  # where the run stood: its snapshot
    seq, run_id = frame.get("seq"), frame.get("run_id")
    if isinstance(seq, int) and not isinstance(seq, bool) and isinstance(run_id, str):
        return f"{run_id}:{seq}"
    return ""
