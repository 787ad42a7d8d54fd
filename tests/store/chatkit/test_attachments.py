"""ChatKit's attachments: their metadata is their owner's, their bytes go to the
attachments' storage and leave it with their row."""

from __future__ import annotations

import pytest

from django_agent_sessions.models import ChatKitAttachment
from django_agent_sessions.store.chatkit import Missing, attachments, threads
from tests.attachment_helpers import stored_files

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice")


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob")


def test_metadata_is_saved_loaded_and_joins_its_thread(alice):
    attachments.save.sync(alice.pk, "atc_1", '{"id": "atc_1"}', None)
    assert attachments.load.sync(alice.pk, "atc_1") == ("", '{"id": "atc_1"}')
    threads.save.sync(alice.pk, "thr_1", "{}", "")
    attachments.save.sync(alice.pk, "atc_1", '{"thread": 1}', "thr_1")
    row = ChatKitAttachment.objects.get()
    assert (row.session.session_id, row.payload) == ("thr_1", '{"thread": 1}')


def test_someone_elses_attachment_is_missing(alice, bob):
    attachments.save.sync(alice.pk, "atc_1", "{}", None)
    for operation in (
        lambda: attachments.save.sync(bob.pk, "atc_1", "{}", None),
        lambda: attachments.load.sync(bob.pk, "atc_1"),
        lambda: attachments.upload.sync(bob.pk, "atc_1", b"data"),
    ):
        with pytest.raises(Missing):
            operation()
    attachments.delete.sync(bob.pk, "atc_1")
    assert ChatKitAttachment.objects.count() == 1


def test_bytes_are_stored_read_and_deleted_with_the_row(
    alice, file_storage, django_capture_on_commit_callbacks
):
    attachments.save.sync(alice.pk, "atc_1", "{}", None)
    attachments.upload.sync(alice.pk, "atc_1", b"first")
    with django_capture_on_commit_callbacks(execute=True):
        attachments.upload.sync(alice.pk, "atc_1", b"second")  # the first file goes
    stored = attachments.load.sync(alice.pk, "atc_1")
    assert attachments.read.sync(stored.storage_name) == b"second"
    assert len(stored_files(file_storage)) == 1
    with django_capture_on_commit_callbacks(execute=True):
        attachments.delete.sync(alice.pk, "atc_1")
    assert stored_files(file_storage) == []
    with pytest.raises(FileNotFoundError):
        attachments.read.sync(stored.storage_name)


def test_bytes_go_with_their_thread(alice, file_storage, django_capture_on_commit_callbacks):
    threads.save.sync(alice.pk, "thr_1", "{}", "")
    attachments.save.sync(alice.pk, "atc_1", "{}", "thr_1")
    attachments.upload.sync(alice.pk, "atc_1", b"data")
    with django_capture_on_commit_callbacks(execute=True):
        threads.delete.sync(alice.pk, "thr_1")
    assert not ChatKitAttachment.objects.exists()
    assert stored_files(file_storage) == []


def test_a_file_over_the_upload_limit_is_refused(alice, settings, file_storage):
    settings.AGENT_SESSIONS = {"ATTACHMENTS": {"MAX_UPLOAD_BYTES": 4}}
    attachments.save.sync(alice.pk, "atc_1", "{}", None)
    with pytest.raises(Missing):
        attachments.upload.sync(alice.pk, "atc_1", b"12345")
    assert attachments.upload_limit() == 4
    assert stored_files(file_storage) == []
