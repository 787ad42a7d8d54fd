"""``store.steering``: a message is stored only for a live run of its conversation,
claimed once in the order it came, and none is stored once the run's end is recorded."""

from __future__ import annotations

from datetime import timedelta

import pytest
from agents.usage import Usage
from django.utils import timezone

from django_agent_sessions.models import AgentRun, SteerMessage
from django_agent_sessions.store import runs, steering
from tests.conftest import user_message
from tests.store.helpers import start, write

pytestmark = pytest.mark.django_db


def test_messages_for_a_live_run_are_claimed_once_in_order(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    started = start(conversation)
    first = steering.add.sync(conversation.pk, "one", "c-1")
    assert first == steering.Accepted(started.run_id)
    steering.add.sync(conversation.pk, "two", "c-2")
    assert steering.claim.sync(started.pk) == [
        steering.Steer("one", "c-1"),
        steering.Steer("two", "c-2"),
    ]
    assert steering.claim.sync(started.pk) == []  # taken: never twice


def test_no_message_is_stored_without_a_live_run(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    assert steering.add.sync(conversation.pk, "one") is None  # no run at all
    started = start(conversation)
    AgentRun.objects.filter(pk=started.pk).update(status=AgentRun.Status.WAITING)
    assert steering.add.sync(conversation.pk, "one") is None  # waits for a person
    AgentRun.objects.filter(pk=started.pk).update(
        status=AgentRun.Status.RUNNING, lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert steering.add.sync(conversation.pk, "one") is None  # its worker died
    AgentRun.objects.filter(pk=started.pk).update(
        lease_expires_at=timezone.now() + timedelta(seconds=60)
    )
    runs.finish.sync(started.pk, status="completed", usage=Usage(), session_pk=conversation.pk)
    assert steering.add.sync(conversation.pk, "one") is None  # its end is recorded
    assert not SteerMessage.objects.exists()
