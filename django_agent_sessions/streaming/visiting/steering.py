"""A message sent during a reply joining it (``WHILE_RUNNING = "steer"``).

The run may be on another web worker or a task worker, so the message reaches it
through the database (``store.steering``), the truth of whether it entered; the run
claims it before its next model call (``running.steering``). The sender is told at once
with ``steer.accepted``; every tab sees it enter as the run's ``item.completed``.
"""

from __future__ import annotations

from typing import Any

from django_agent_sessions.store import steering as store_steering
from django_agent_sessions.streaming.running.steering import steers
from django_agent_sessions.streaming.wire import frames

__all__ = ["enter", "steers"]


async def enter(session_pk: int, frame: frames.UserMessage) -> dict[str, Any] | None:
    """Store ``frame`` for the conversation's live run: the sender's ``steer.accepted``
    frame; None when no run is live there (the message is then sent as usual)."""
    accepted = await store_steering.add(session_pk, frame.text, frame.client_id)
    if accepted is None:
        return None
    return {"type": "steer.accepted", "run_id": accepted.run_id, "client_id": frame.client_id}
