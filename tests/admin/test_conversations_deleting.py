"""Deleting conversations, from the admin or with their owner, without loading their items."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_agent_sessions.models import AgentSession, SessionItem
from tests.admin.helpers import action, delete_url
from tests.conversations import add_many_items, item_selects, make_conversation, transcript_items

pytestmark = pytest.mark.django_db


def test_deleting_a_20000_item_conversation_loads_no_items(deleter):
    conversation = make_conversation("c-large", [])
    add_many_items(conversation, 20_000)
    kept = make_conversation("c-kept", transcript_items())
    with CaptureQueriesContext(connection) as confirm_queries:
        confirm = deleter.get(delete_url(conversation))
    assert "Conversation: <a" in confirm.text
    assert "Items: 20000" in confirm.text
    with CaptureQueriesContext(connection) as delete_queries:
        response = deleter.post(delete_url(conversation), {"post": "yes"})
    assert response.status_code == 302
    assert not AgentSession.objects.filter(pk=conversation.pk).exists()
    assert not SessionItem.objects.filter(session_id=conversation.pk).exists()
    assert SessionItem.objects.filter(session=kept).count() == 7
    assert item_selects(confirm_queries.captured_queries) == []
    assert item_selects(delete_queries.captured_queries) == []


def test_delete_selected_loads_no_items(deleter):
    chosen = [make_conversation(f"c-{n}", []) for n in range(3)]
    for conversation in chosen:
        add_many_items(conversation, 500)
    with CaptureQueriesContext(connection) as captured:
        confirm = action(deleter, "delete_selected", chosen)
        assert "Items: 1500" in confirm.text
        done = action(deleter, "delete_selected", chosen, post="yes")
    assert done.status_code == 302
    assert not AgentSession.objects.exists()
    assert not SessionItem.objects.exists()
    assert item_selects(captured.captured_queries) == []


def test_deleting_a_user_deletes_their_conversations_without_loading_items():
    owner = User.objects.create_user("leaving")
    conversation = make_conversation("c-owned", [], owner=owner)
    add_many_items(conversation, 2_000)
    kept = make_conversation("c-kept", transcript_items())
    with CaptureQueriesContext(connection) as captured:
        owner.delete()
    assert not AgentSession.objects.filter(pk=conversation.pk).exists()
    assert not SessionItem.objects.filter(session_id=conversation.pk).exists()
    assert SessionItem.objects.filter(session=kept).count() == 7
    assert item_selects(captured.captured_queries) == []
