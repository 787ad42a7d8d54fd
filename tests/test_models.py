"""The conversation and run models (``models.py``): the run queryset's questions, an
item's decoded data, what each row reads as, and the models of ``feedback/``,
``files/`` and ``usage/`` importable from here."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from django_agent_sessions import models
from django_agent_sessions.feedback.models import Feedback
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.usage.models import RunModelUsage
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db


def test_the_run_querysets_questions_by_status_and_lease():
    now = timezone.now()
    runs = {}
    for name, status, lease in [
        ("live", AgentRun.Status.RUNNING, now + timedelta(seconds=30)),
        ("stale", AgentRun.Status.RUNNING, now - timedelta(seconds=30)),
        ("waiting", AgentRun.Status.WAITING, now - timedelta(hours=1)),
        ("done", AgentRun.Status.COMPLETED, now + timedelta(seconds=30)),
    ]:
        conversation = make_conversation(f"c-{name}", [])
        runs[name] = AgentRun.objects.create(
            session=conversation, status=status, lease_expires_at=lease
        )

    def names(queryset: models.AgentRunQuerySet) -> set[str]:
        return {run.session.session_id.removeprefix("c-") for run in queryset}

    assert names(AgentRun.objects.running()) == {"live", "stale"}
    assert names(AgentRun.objects.live(now)) == {"live"}
    assert names(AgentRun.objects.stale(now)) == {"stale"}
    assert names(AgentRun.objects.holding(now)) == {"live", "waiting"}


def test_a_conversation_holds_one_unfinished_run_at_a_time():
    conversation = make_conversation("c-1", [])
    AgentRun.objects.create(session=conversation, status=AgentRun.Status.WAITING)
    with pytest.raises(IntegrityError), transaction.atomic():
        AgentRun.objects.create(session=conversation, status=AgentRun.Status.RUNNING)
    AgentRun.objects.create(session=conversation, status=AgentRun.Status.COMPLETED)


def test_an_item_decodes_its_stored_text_and_rows_read_as_their_names():
    conversation = make_conversation("c-1", [{"role": "user", "content": "hi 🦜", "n": 1.0}])
    item = SessionItem.objects.get(session=conversation)
    assert item.data == {"role": "user", "content": "hi 🦜", "n": 1.0}
    assert str(item) == f"message #{item.pk}"
    assert str(conversation) == "c-1"
    conversation.title = "Weather"
    assert str(conversation) == "Weather"
    run = AgentRun.objects.create(session=conversation, agent_name="Helper")
    assert str(run) == f"Helper {run.run_id} (running)"


def test_the_models_of_the_other_modules_are_importable_from_here():
    assert (models.Feedback, models.Attachment, models.RunModelUsage) == (
        Feedback,
        Attachment,
        RunModelUsage,
    )
    assert AgentSession._meta.app_label == Feedback._meta.app_label == "django_agent_sessions"
