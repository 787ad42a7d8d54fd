"""The session of a run that starts an empty conversation: its first read is free.

A conversation's first message creates the conversation and records its run in one
statement (``store.first_messages``), and that record says the conversation held no
items. The SDK's Runner then reads the history before it calls the model: a hop to the
database thread, shared by every chat's first message, to learn what is already known
(at 50 simultaneous first messages each hop there is paid 50 times over before the last
first token, ``benchmarks/README.md``). ``EmptyHistorySession`` answers that first read
with ``[]`` without the hop.

It is exact for everything written through the app: the run is the conversation's only
run (the database allows one per conversation) and it writes the person's message only
after this read. The one difference from a ``DjangoSession``: items a project writes to
the new conversation from outside the chat (its own ``DjangoSession`` on the same id, in
the milliseconds between the first message and the run's first read) are not in that
read, as if they had come a moment later. Every later read, and any read after a write
through this session, goes to the database.
"""

from __future__ import annotations

from typing import Any

from agents.items import TResponseInputItem
from agents.run_context import RunContextWrapper

from django_agent_sessions import telemetry
from django_agent_sessions.session import DjangoSession


class EmptyHistorySession(DjangoSession):
    """A ``DjangoSession`` whose first ``get_items``, before any write through it, is
    ``[]`` with no database hop (see the module)."""

    def __init__(self, session_id: str, **options: Any) -> None:
        super().__init__(session_id, **options)
        # The id known empty, until the first read or write. ``fork()`` copies the
        # session under another id, which is then read as usual.
        self._known_empty: str | None = self.session_id

    async def get_items(
        self, limit: int | None = None, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        if self._known_empty is not None and self._known_empty == self.session_id:
            self._known_empty = None
            traced = {"gen_ai.conversation.id": self.session_id, "agent_sessions.items": 0}
            with telemetry.span(telemetry.HISTORY_READ, traced) as span:
                span.set_attribute("agent_sessions.known_empty", True)
            return []
        return await super().get_items(limit, wrapper=wrapper)

    async def add_items(
        self, items: list[TResponseInputItem], *, wrapper: RunContextWrapper[Any] | None = None
    ) -> None:
        self._known_empty = None
        await super().add_items(items, wrapper=wrapper)

    async def pop_item(
        self, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> TResponseInputItem | None:
        self._known_empty = None
        return await super().pop_item(wrapper=wrapper)

    async def clear_session(self, *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        self._known_empty = None
        await super().clear_session(wrapper=wrapper)

    async def _atomic_replace_items(self, items: list[TResponseInputItem]) -> bool:
        self._known_empty = None
        return await super()._atomic_replace_items(items)
