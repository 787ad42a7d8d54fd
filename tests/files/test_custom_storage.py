"""A project whose files go to a storage backend of its own (``tests.files.dict_storage``,
a few methods of Django's ``Storage`` API over a dict) under its own ``STORAGES`` alias
needs settings only: the upload, the file view, the orphan command, export and import,
and clearing all go through it, and nothing reaches the default storage."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.http import FileResponse
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from django_agent_sessions import DjangoSession, retention
from django_agent_sessions.models import AgentSession, Attachment
from tests.attachment_helpers import image_message, png, stored_files
from tests.conftest import assistant_message
from tests.files.dict_storage import Stored

pytestmark = pytest.mark.django_db(transaction=True)


def _contents(bucket: dict[str, Stored]) -> dict[str, bytes]:
    return {name: stored.data for name, stored in bucket.items()}


def _served(client: Client, url: str) -> bytes:
    response = client.get(url)
    assert isinstance(response, FileResponse), response
    return b"".join(response.streaming_content)  # type: ignore[arg-type]


def _files(*args: str) -> str:
    out = io.StringIO()
    call_command("agent_sessions_files", "--grace", "0s", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_every_way_in_and_out_goes_through_the_configured_backend(
    bucket, file_storage, client: Client, tmp_path: Path
):
    alice = User.objects.create_user("alice")
    client.force_login(alice)
    sent, unsent = png(200, 200), png(41, 30)  # the import stores files over 64 KiB
    # The upload and the file view.
    upload = reverse("django_agent_sessions:upload", args=["c-own"])
    response = client.post(upload, {"file": SimpleUploadedFile("unsent.png", unsent)})
    assert response.status_code == 201, response.content
    unsent_row = Attachment.objects.get()
    assert _contents(bucket) == {unsent_row.storage_name: unsent}
    assert _served(client, response.json()["url"]) == unsent

    # A message holding a file, through the session; a file nothing names.
    items = [image_message(sent), assistant_message("A small picture.")]
    async_to_sync(DjangoSession("c-own", owner=alice).add_items)(items)
    sent_row = Attachment.objects.exclude(pk=unsent_row.pk).get()
    stray = "agent_sessions/0123/stray"
    bucket[stray] = Stored(b"left by a crash", bucket[sent_row.storage_name].modified)
    assert len(bucket) == 3

    # The orphan command finds the upload never sent and the stray file, and removes them.
    assert _files() == (
        f"unreferenced attachment: {unsent_row.storage_name}\nfile without an attachment: {stray}\n"
    )
    assert len(bucket) == 3
    _files("--delete")
    assert _contents(bucket) == {sent_row.storage_name: sent}
    assert list(Attachment.objects.values_list("pk", flat=True)) == [sent_row.pk]

    # Export, clear (the chat's Clear), delete, import: the file is read from the backend
    # into the export, removed from it, and stored in it again.
    export = tmp_path / "export.jsonl"
    call_command("agent_sessions_export", "c-own", "-o", str(export))
    assert client.post(reverse("django_agent_sessions:clear", args=["c-own"])).status_code == 200
    assert bucket == {}
    assert not Attachment.objects.exists()
    retention.delete_conversations(list(AgentSession.objects.values_list("pk", flat=True)))
    call_command("agent_sessions_import", str(export), stdout=io.StringIO())
    assert async_to_sync(DjangoSession("c-own", owner=alice).get_items)() == items
    imported = Attachment.objects.get()
    assert _contents(bucket) == {imported.storage_name: sent}
    url = reverse("django_agent_sessions:attachment", args=["c-own", imported.pk])
    assert _served(client, url) == sent

    assert stored_files(file_storage) == []  # the default storage was never used


def test_a_stray_file_younger_than_the_grace_is_left(bucket):
    stray = "agent_sessions/0123/stray"
    bucket[stray] = Stored(b"a write in flight", timezone.now())
    out = io.StringIO()
    call_command("agent_sessions_files", "--delete", stdout=out, stderr=io.StringIO())
    assert out.getvalue() == ""  # within the default grace of an hour
    assert list(bucket) == [stray]
    bucket[stray].modified -= timedelta(hours=2)
    call_command("agent_sessions_files", "--delete", stdout=out, stderr=io.StringIO())
    assert out.getvalue() == f"file without an attachment: {stray}\n"
    assert bucket == {}
