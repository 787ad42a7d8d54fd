"""Small pieces of the admin's responses: streaming, totals, page links, messages."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.db.models import Count, QuerySet, Sum
from django.http import HttpRequest
from django.utils.translation import ngettext

from django_agent_sessions import retention
from django_agent_sessions.models import AgentSession

# How many conversations a confirmation page lists by name.
CONFIRM_LIST_LIMIT = 50


def streamed(request: HttpRequest, chunks: Iterator[str]) -> Iterator[str] | AsyncIterator[str]:
    """``chunks`` in the form the server streams without buffering.

    Under ASGI, Django reads a sync iterator into one list before sending it (the
    whole export in memory); an async iterator that pulls each chunk through the
    shared sync thread, where the database connection lives, streams instead.
    """
    if not isinstance(request, ASGIRequest):
        return chunks  # WSGI streams sync iterators as they are
    pull = sync_to_async(_next_chunk, thread_sensitive=True)

    async def stream() -> AsyncIterator[str]:
        while (chunk := await pull(chunks)) is not None:
            yield chunk

    return stream()


def _next_chunk(chunks: Iterator[str]) -> str | None:
    return next(chunks, None)


def totals(queryset: QuerySet[AgentSession]) -> tuple[int, int]:
    """How many conversations, and items in them, in one query (the stored counts)."""
    totals = queryset.aggregate(count=Count("pk"), items=Sum("item_count"))
    return totals["count"], totals["items"] or 0


def first_named(queryset: QuerySet[AgentSession]) -> list[AgentSession]:
    """The conversations a confirmation page lists by name: a few, without payloads."""
    named = queryset.select_related(None).only("pk", "session_id", "title")
    return list(named[:CONFIRM_LIST_LIMIT])


def page_query(request: HttpRequest, number: int) -> str:
    query = request.GET.copy()
    query["page"] = str(number)
    return query.urlencode()


def cleared_message(removed: retention.Removed) -> str:
    conversations = ngettext(
        "Cleared %(count)d conversation", "Cleared %(count)d conversations", removed.conversations
    ) % {"count": removed.conversations}
    items = ngettext("%(count)d item removed.", "%(count)d items removed.", removed.items) % {
        "count": removed.items
    }
    return f"{conversations}; {items}"
