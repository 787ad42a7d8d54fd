"""Building conversations for admin, transfer and retention tests, through the store, and
reading back what their runs recorded."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connection, models
from django.utils import timezone

from django_agent_sessions import serialization
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import items as stored_items

XSS_SCRIPT = "<script>alert('xss')</script>"
XSS_IMG = '<img src=x onerror="alert(1)">'


async def run_statuses(session_id: str) -> list[str]:
    """The statuses of the conversation's runs, oldest first."""
    query = AgentRun.objects.filter(session__session_id=session_id).order_by("started_at")
    return [status async for status in query.values_list("status", flat=True)]


def make_conversation(
    session_id: str,
    items: list[dict[str, Any]],
    *,
    owner: Any = None,
    title: str = "",
    updated_at: datetime | None = None,
) -> AgentSession:
    """A conversation written the way DjangoSession writes it."""
    scope = stored_items.Scope(session_id, getattr(owner, "pk", None), "default")
    encoded = serialization.encode_items(items, max_bytes=None, max_depth=100)
    if encoded:
        stored_items.append_items(scope, encoded, title)
    else:
        AgentSession.objects.create(session_id=session_id, owner=owner, title=title)
    conversation: AgentSession = AgentSession.objects.get(session_id=session_id)
    if updated_at is not None:
        AgentSession.objects.filter(pk=conversation.pk).update(updated_at=updated_at)
        conversation.refresh_from_db()
    return conversation


def add_many_items(conversation: AgentSession, count: int) -> None:
    """``count`` small user messages, as rows DjangoSession would write for them.

    One ``executemany`` of a plain INSERT: Django's ``bulk_create`` compiles every value
    of every row in Python, about 0.7 ms a row (14 s for 20,000), where this is 20 times
    less; the rows are the same.
    """
    table = connection.ops.quote_name(SessionItem._meta.db_table)
    columns = ("session_id", "payload", "item_type", "role", "call_id", "preview", "created_at")
    statement = (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
    )
    created_at = SessionItem._meta.get_field("created_at")
    assert isinstance(created_at, models.DateTimeField)
    now = created_at.get_db_prep_value(timezone.now(), connection, prepared=False)
    rows = (
        (
            conversation.pk,
            serialization.dumps({"role": "user", "content": f"message {n}"}),
            "message",
            "user",
            "",
            f"message {n}",
            now,
        )
        for n in range(count)
    )
    with connection.cursor() as cursor:
        cursor.executemany(statement, rows)
    total = count + conversation.item_count
    AgentSession.objects.filter(pk=conversation.pk).update(item_count=total)
    conversation.refresh_from_db()


def item_selects(captured: list[dict[str, Any]]) -> list[str]:
    """The captured SELECTs that read item payloads."""
    table = connection.ops.quote_name(SessionItem._meta.db_table)
    return [
        q["sql"]
        for q in captured
        if q["sql"].lstrip().upper().startswith("SELECT")
        and table in q["sql"]
        and "payload" in q["sql"]
    ]


def transcript_items() -> list[dict[str, Any]]:
    """One of each kind of item the transcript shows."""
    return [
        {"role": "user", "content": "What's the weather in Paris?"},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Need the weather tool."}],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 21 C"},
        {
            "type": "function_call",
            "call_id": "call_2",
            "name": "transfer_to_billing_agent",
            "arguments": "{}",
        },
        {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": '{"assistant": "Billing agent"}',
        },
        {
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "It is sunny in Paris.", "annotations": []}
            ],
        },
    ]


def xss_items() -> list[dict[str, Any]]:
    """Hostile text in every place the transcript displays."""
    return [
        {"role": "user", "content": XSS_SCRIPT},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": XSS_IMG, "annotations": []}],
        },
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": XSS_SCRIPT}]},
        {"type": "function_call", "call_id": XSS_IMG, "name": XSS_SCRIPT, "arguments": XSS_IMG},
        {"type": "function_call_output", "call_id": XSS_IMG, "output": XSS_SCRIPT * 100},
        {"type": XSS_SCRIPT, "role": XSS_IMG, "name": XSS_IMG},
    ]
