"""The items a run's end names: the person's message it answered and its reply."""

from __future__ import annotations

from django.db.models import OuterRef, QuerySet, Subquery

from django_agent_sessions.models import AgentRun, SessionItem


def with_item_ids(runs: QuerySet[AgentRun]) -> QuerySet[AgentRun]:
    """With what a run's end names (``lifecycle.end``), or None: ``user_item_id``, the
    person's message (its first user message), ``reply_item_id``, its newest reply."""
    messages = SessionItem.objects.filter(
        session_id=OuterRef("session_id"),
        id__gt=OuterRef("history_item_id"),
        id__lte=OuterRef("last_item_id"),  # a next run may have started since the commit
        item_type="message",
    )
    asked = messages.filter(role="user").order_by("id").values("id")[:1]
    reply = messages.filter(role="assistant").order_by("-id").values("id")[:1]
    annotated: QuerySet[AgentRun] = runs.annotate(
        user_item_id=Subquery(asked), reply_item_id=Subquery(reply)
    )
    return annotated
