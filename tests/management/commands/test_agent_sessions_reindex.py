"""``manage.py agent_sessions_reindex``: every item's searchable text computed again, and
how many changed."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from django_agent_sessions.models import SessionItem
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db


def _reindex() -> str:
    out = io.StringIO()
    call_command("agent_sessions_reindex", stdout=out)
    return out.getvalue()


def test_lost_search_text_is_computed_again_and_counted():
    make_conversation("c-1", [{"role": "user", "content": "a quiet pistachio"}])
    (text,) = SessionItem.objects.values_list("search_text", flat=True)
    assert "pistachio" in text
    assert _reindex() == "Search index rebuilt; 0 items' text changed.\n"
    SessionItem.objects.update(search_text="")
    assert _reindex() == "Search index rebuilt; 1 items' text changed.\n"
    assert list(SessionItem.objects.values_list("search_text", flat=True)) == [text]
