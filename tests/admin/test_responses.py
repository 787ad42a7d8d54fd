"""The admin's small response pieces (``admin/responses.py``): streaming under ASGI and
WSGI, the totals and names a confirmation shows, page links that keep the filters, the
cleared message."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from asgiref.sync import async_to_sync
from django.core.handlers.asgi import ASGIRequest
from django.test import AsyncRequestFactory, RequestFactory

from django_agent_sessions import retention
from django_agent_sessions.admin import responses
from django_agent_sessions.models import AgentSession
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db


def test_chunks_stream_as_they_are_under_wsgi_and_pulled_one_by_one_under_asgi():
    chunks = iter(["[", "1", "]"])
    wsgi = RequestFactory().get("/admin/")
    assert responses.streamed(wsgi, chunks) is chunks
    asgi = AsyncRequestFactory().get("/admin/")
    assert isinstance(asgi, ASGIRequest)
    stream = responses.streamed(asgi, iter(["[", "1", "]"]))
    assert isinstance(stream, AsyncIterator)

    async def read() -> list[str]:
        return [chunk async for chunk in stream]

    assert async_to_sync(read)() == ["[", "1", "]"]


def test_totals_and_the_first_names_of_a_selection(monkeypatch):
    make_conversation("c-1", [{"role": "user", "content": "hi"}] * 3, title="One")
    make_conversation("c-2", [{"role": "user", "content": "hi"}] * 2)
    make_conversation("c-3", [])
    everything = AgentSession.objects.order_by("session_id")
    assert responses.totals(everything) == (3, 5)
    assert responses.totals(everything.none()) == (0, 0)
    monkeypatch.setattr(responses, "CONFIRM_LIST_LIMIT", 2)
    assert [c.session_id for c in responses.first_named(everything)] == ["c-1", "c-2"]


def test_a_page_link_keeps_the_other_filters():
    request = RequestFactory().get("/admin/", {"q": "weather", "page": "2", "o": "1"})
    assert responses.page_query(request, 3) == "q=weather&page=3&o=1"


def test_the_cleared_message_counts_conversations_and_items():
    assert responses.cleared_message(retention.Removed(conversations=1, items=1)) == (
        "Cleared 1 conversation; 1 item removed."
    )
    assert responses.cleared_message(retention.Removed(conversations=2, items=10)) == (
        "Cleared 2 conversations; 10 items removed."
    )
