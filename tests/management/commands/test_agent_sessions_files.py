"""``manage.py agent_sessions_files``: attachments no item refers to, listed and with
``--delete`` removed, past ``--grace``; a bad ``--grace`` named."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command
from django.utils import timezone

from django_agent_sessions.files import storage
from django_agent_sessions.models import Attachment
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db


def _files(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("agent_sessions_files", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_an_unreferenced_attachment_is_listed_then_removed_past_the_grace(file_storage):
    conversation = make_conversation("c-1", [{"role": "user", "content": "no file here"}])
    name = storage.storage().save("agent_sessions/c1/upload", ContentFile(b"never sent"))
    row = Attachment.objects.create(
        session=conversation,
        content_type="text/plain",
        size=10,
        sha256="cd" * 32,
        storage_name=name,
        created_at=timezone.now() - timedelta(hours=2),
    )
    listed, summary = _files()
    assert summary == "Found 1 unreferenced attachments, 0 stray files.\n"
    assert listed.startswith("unreferenced attachment: ")
    assert _files("--grace", "3h") == ("", "Found 0 unreferenced attachments, 0 stray files.\n")
    assert Attachment.objects.filter(pk=row.pk).exists()
    _, summary = _files("--delete")
    assert summary == "Removed 1 unreferenced attachments, 0 stray files.\n"
    assert not Attachment.objects.exists()


def test_a_bad_grace_is_named():
    with pytest.raises(CommandError, match="--grace: "):
        _files("--grace", "soon")
