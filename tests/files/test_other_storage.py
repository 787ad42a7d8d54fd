"""A project whose files go to another storage (an alias of its own, another backend: here
Django's InMemoryStorage) needs settings only: the session, the upload and the file view
use the storage API and nothing else."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.files.storage import storages
from django.urls import reverse

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import Attachment
from tests.attachment_helpers import image_message, png, stored_files

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def memory_storage(settings, file_storage):
    settings.STORAGES = {
        **settings.STORAGES,
        "agent_files": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    }
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "ATTACHMENTS": {"STORAGE": "agent_files"}}
    return storages["agent_files"]


def _names(storage, directory: str = "agent_sessions") -> list[str]:
    folders, files = storage.listdir(directory)
    return [f"{directory}/{name}" for name in files] + [
        name for folder in folders for name in _names(storage, f"{directory}/{folder}")
    ]


def test_the_session_keeps_files_in_the_storage_the_settings_name(
    memory_storage, file_storage, client
):
    owner = User.objects.create_user("alice")
    session = DjangoSession("c-mem", owner=owner)
    message = image_message(png(300, 300))
    async_to_sync(session.add_items)([message])

    (name,) = _names(memory_storage)
    assert Attachment.objects.get().storage_name == name
    assert stored_files(file_storage) == []  # nothing in the default storage
    assert async_to_sync(DjangoSession("c-mem", owner=owner).get_items)() == [message]

    client.force_login(owner)
    url = reverse("django_agent_sessions:attachment", args=["c-mem", Attachment.objects.get().pk])
    assert b"".join(client.get(url).streaming_content) == memory_storage.open(name).read()

    async_to_sync(session.clear_session)()
    assert _names(memory_storage) == []
