"""What a conversation left behind: the rows of every model of the app that belong to
it, counted by following each model's foreign keys to a conversation or a run; and a
temporary chat that wrote into every table it can (items with a file, runs, approvals,
model usage, a rating, a schedule, an order)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from asgiref.sync import async_to_sync
from django.apps import apps
from django.db import models

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import (
    AgentRun,
    AgentSession,
    Feedback,
    RunModelUsage,
    ScheduledRun,
    ToolApproval,
    UsageTotal,
)
from django_agent_sessions.store import orders
from tests.attachment_helpers import image_message, png

# Rows that name no conversation and no run: what a removed temporary chat's runs spent,
# as totals (store.usage_totals). Every other model must lead to a conversation.
UNRELATED = {UsageTotal}


def _paths(model: type[models.Model]) -> list[str]:
    """The lookups from ``model`` to a conversation's primary key."""
    if model is AgentSession:
        return ["pk", "branched_from_id"]
    paths = []
    for field in model._meta.get_fields():
        if not ((field.many_to_one or field.one_to_one) and field.concrete):
            continue
        if field.related_model is AgentSession:
            paths.append(f"{field.name}_id")
        elif field.related_model is AgentRun:
            paths.append(f"{field.name}__session_id")
    return paths


def left_behind(conversation_pk: int) -> dict[str, int]:
    """Every model of the app with rows belonging to the conversation: their counts."""
    found = {}
    for model in apps.get_app_config("django_agent_sessions").get_models():
        paths = _paths(model)
        assert paths or model in UNRELATED, f"{model.__name__} leads to no conversation"
        query = models.Q()
        for path in paths:
            query |= models.Q(**{path: conversation_pk})
        count = model._default_manager.filter(query).count() if paths else 0
        if count:
            found[model.__name__] = count
    return found


def fill(conversation: AgentSession, owner: Any) -> None:
    """Write into every table a conversation's life can: a file in storage (an image in
    a message), a run with an approval, a model's usage, a rating, a schedule, an order."""
    # Over OFFLOAD_CHARS (64 KiB of base64): stored as a file.
    session = DjangoSession(conversation.session_id, owner=owner)
    items: list[Any] = [image_message(png(128, 128))]
    async_to_sync(session.add_items)(items)
    run = AgentRun.objects.create(
        session=conversation, status="completed", total_tokens=120, agent_name="Helper"
    )
    ToolApproval.objects.create(run=run, call_id="call-1", name="pay")
    RunModelUsage.objects.create(run=run, model="demo", total_tokens=120)
    item = conversation.items.order_by("id").last()
    Feedback.objects.create(
        session=conversation, run=run, user=owner, item_id=item.pk if item else 1, rating=1
    )
    ScheduledRun.objects.create(
        session=conversation, owner=owner, name="hourly", input="hi", every=timedelta(hours=1)
    )
    orders.Order(orders.TAB, {"text": "hi"}).write(run.pk, "default")
