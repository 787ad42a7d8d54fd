"""``store.holding``: a conversation is held by a live or waiting run, not by a run that
ended nor by one whose worker died (its lease expired)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from agents.usage import Usage
from django.utils import timezone

from django_agent_sessions.models import AgentRun
from django_agent_sessions.store import holding, runs
from tests.conftest import user_message
from tests.store.helpers import start, write

pytestmark = pytest.mark.django_db


def test_a_conversation_is_held_while_its_run_is_live_or_waits(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    assert not holding.held.sync(conversation.pk)
    started = start(conversation)
    assert holding.held.sync(conversation.pk)
    AgentRun.objects.filter(pk=started.pk).update(status=AgentRun.Status.WAITING)
    assert holding.held.sync(conversation.pk)  # waits for decisions: still held


def test_an_ended_run_or_one_whose_worker_died_holds_nothing(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    started = start(conversation)
    past = timezone.now() - timedelta(seconds=1)
    AgentRun.objects.filter(pk=started.pk).update(lease_expires_at=past)
    assert not holding.held.sync(conversation.pk)  # the next run ends it as lost
    AgentRun.objects.filter(pk=started.pk).update(
        lease_expires_at=timezone.now() + timedelta(seconds=60)
    )
    assert holding.held.sync(conversation.pk)
    runs.finish.sync(started.pk, status="cancelled", usage=Usage(), session_pk=conversation.pk)
    assert not holding.held.sync(conversation.pk)
    other = write(f"{session_id}-other", user_message("hi"))
    start(other)
    assert not holding.held.sync(conversation.pk)  # another conversation's run
