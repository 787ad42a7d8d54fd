"""``QueuedMessage``: sent in id order, gone with its conversation."""

from __future__ import annotations

import pytest

from django_agent_sessions.models import AgentSession, QueuedMessage

pytestmark = pytest.mark.django_db


def test_queued_messages_are_listed_in_order_and_go_with_their_conversation() -> None:
    conversation = AgentSession.objects.create(session_id="queued-models")
    first = QueuedMessage.objects.create(session=conversation, text="One", client_id="c-1")
    QueuedMessage.objects.create(session=conversation, text="Two " * 40)
    assert [m.text[:3] for m in QueuedMessage.objects.all()] == ["One", "Two"]
    assert str(first) == "One"
    assert len(str(QueuedMessage.objects.last())) == 80
    conversation.delete()
    assert not QueuedMessage.objects.exists()
