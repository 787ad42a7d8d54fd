"""``AgentRunContext``: what the tools of a websocket run receive as ``ctx.context``.

Public: tools import it to type their context, and consumers that override
``get_run_context()`` may return a subclass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class AgentRunContext:
    """Who is asking, in which conversation."""

    user: Any
    session_id: str  # the stored conversation id
    session: Any  # the run's DjangoSession
    scope: dict[str, Any]  # the websocket connection's ASGI scope
