"""A title written after a conversation's first exchange, and the rule that a person's
title wins (``AgentSession.title_source``).

``untitled_first_message`` asks, in one query, whether the conversation still wants a
title: its title is the first message's (``title_source`` ""), and the run that just
ended is its first completed run. ``write`` is the compare-and-set: one ``UPDATE`` that
sets the title only while ``title_source`` is still "", so a rename made while the
title was being written (``owned.rename`` sets "person") is kept, whichever commits
first, and a title is written at most once.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Subquery

from django_agent_sessions.models import AgentRun, AgentSession, SessionItem, TitleSource
from django_agent_sessions.store.hops import hop


@hop
def untitled_first_message(conversation_pk: int, run_pk: int) -> str | None:
    """The preview of the conversation's first user message when it wants a title
    written now (see the module), else None."""
    other_runs = AgentRun.objects.filter(
        session_id=OuterRef("pk"), status=AgentRun.Status.COMPLETED
    ).exclude(pk=run_pk)
    first = SessionItem.objects.filter(
        session_id=OuterRef("pk"), item_type="message", role="user"
    ).order_by("id")
    rows = (
        AgentSession.objects.filter(pk=conversation_pk, title_source=TitleSource.FIRST_MESSAGE)
        .exclude(Exists(other_runs))
        .annotate(first=Subquery(first.values("preview")[:1]))
    )
    found: tuple[str | None] | None = rows.values_list("first").first()
    if found is None:
        return None
    return found[0] or ""


@hop(write=True)
def write(conversation_pk: int, title: str) -> bool:
    """Set the model's title unless the person titled the conversation (or a title was
    written already); whether it was set."""
    rows = AgentSession.objects.filter(pk=conversation_pk, title_source=TitleSource.FIRST_MESSAGE)
    return bool(rows.update(title=title, title_source=TitleSource.MODEL))
