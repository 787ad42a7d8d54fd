"""Pruning, as an operator runs it (``manage.py agent_sessions_prune``), takes an idle
conversation's files out of the storage with its rows, and leaves an active one's."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.utils import timezone

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession, Attachment
from tests.attachment_helpers import image_message, png, stored_files

pytestmark = pytest.mark.django_db(transaction=True)


def _prune(*args: str) -> str:
    out = io.StringIO()
    call_command("agent_sessions_prune", "--older-than", "30d", *args, stdout=out)
    return out.getvalue()


def test_pruning_removes_an_idle_conversations_files_from_the_storage(file_storage):
    kept_image, pruned_images = png(210, 210), [png(200, 200), png(201, 201)]
    async_to_sync(DjangoSession("c-active").add_items)([image_message(kept_image)])
    idle = DjangoSession("c-idle")
    async_to_sync(idle.add_items)([image_message(image) for image in pruned_images])
    AgentSession.objects.filter(session_id="c-idle").update(
        updated_at=timezone.now() - timedelta(days=45)
    )
    assert sorted(p.read_bytes() for p in stored_files(file_storage)) == sorted(
        [kept_image, *pruned_images]
    )

    # A dry run counts and removes nothing, files included.
    assert _prune("--dry-run").startswith("Would delete 1 conversation(s) with 2 item(s)")
    assert len(stored_files(file_storage)) == 3

    assert _prune("--no-input").startswith("Deleted 1 conversation(s) with 2 item(s)")
    assert [p.read_bytes() for p in stored_files(file_storage)] == [kept_image]
    assert list(Attachment.objects.values_list("session__session_id", flat=True)) == ["c-active"]
    assert async_to_sync(idle.get_items)() == []
    assert async_to_sync(DjangoSession("c-active").get_items)() == [image_message(kept_image)]
