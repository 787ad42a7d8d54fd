"""A title written after a conversation's first exchange, and the rule that a person's
title wins (``AgentSession.title_source``).

``with_title_wish`` has the end record say whether the conversation still wants a
title: its title is the first message's (``title_source`` ""), and the run that just
ended is its first completed run. ``write`` is the compare-and-set: one ``UPDATE`` that
sets the title only while ``title_source`` is still "", so a rename made while the
title was being written (``owned.rename`` sets "person") is kept, whichever commits
first, and a title is written at most once.
"""

from __future__ import annotations

from django.db.models import Case, CharField, Exists, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce

from django_agent_sessions.models import AgentRun, AgentSession, SessionItem, TitleSource
from django_agent_sessions.store.hops import hop


def with_title_wish(runs: QuerySet[AgentRun]) -> QuerySet[AgentRun]:
    """With ``title_from``: the preview of the conversation's first user message ("" if
    it has none) when the run's end leaves the conversation wanting a title (see the
    module), else None. An annotation of the end record's own query (``runs.finish``):
    asking it in a hop of its own, as a title's first step, put one hop per ending run
    on the worker's database thread at the moment the next messages start."""
    other_runs = AgentRun.objects.filter(
        session_id=OuterRef("session_id"), status=AgentRun.Status.COMPLETED
    ).exclude(pk=OuterRef("pk"))
    first = SessionItem.objects.filter(
        session_id=OuterRef("session_id"), item_type="message", role="user"
    ).order_by("id")
    wanted = Q(status=AgentRun.Status.COMPLETED, session__title_source=TitleSource.FIRST_MESSAGE)
    preview = Coalesce(Subquery(first.values("preview")[:1]), Value(""))
    title_from = Case(
        When(wanted & ~Exists(other_runs), then=preview), default=None, output_field=CharField()
    )
    annotated: QuerySet[AgentRun] = runs.annotate(title_from=title_from)
    return annotated


@hop(write=True)
def write(conversation_pk: int, title: str) -> bool:
    """Set the model's title unless the person titled the conversation (or a title was
    written already); whether it was set."""
    rows = AgentSession.objects.filter(pk=conversation_pk, title_source=TitleSource.FIRST_MESSAGE)
    return bool(rows.update(title=title, title_source=TitleSource.MODEL))
