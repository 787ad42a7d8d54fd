"""Attachments no item refers to, and files no attachment names, found and removed."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.utils import timezone

from django_agent_sessions.files import storage
from django_agent_sessions.models import Attachment
from django_agent_sessions.store import orphans, uploads
from tests.attachment_helpers import image_message, png, stored_files

pytestmark = pytest.mark.django_db(transaction=True)


def _conversation_with_two_images(make_session):
    session = make_session()
    first, second = image_message(png(300, 300)), image_message(png(301, 300))
    async_to_sync(session.add_items)([first, second])
    async_to_sync(session.pop_item)()  # the second image's item is gone; its file stays
    return session, first


def test_a_popped_items_file_is_found_and_removed_and_the_rest_kept(make_session, file_storage):
    session, first = _conversation_with_two_images(make_session)
    (names,) = orphans.unreferenced().values()
    assert len(names) == 1
    assert orphans.remove_unreferenced() == names
    assert Attachment.objects.count() == 1
    assert len(stored_files(file_storage)) == 1
    assert async_to_sync(session.get_items)() == [first]


def test_a_file_without_a_row_is_found_only_after_the_grace(make_session, file_storage):
    name = storage.save(f"{storage.setting('DIRECTORY')}/x/stray", b"left behind")
    assert orphans.stray_files(timedelta(hours=1)) == []
    later = timezone.now() + timedelta(hours=2)
    assert orphans.stray_files(timedelta(hours=1), now=later) == [name]


def test_the_command_lists_then_deletes(make_session, file_storage):
    _conversation_with_two_images(make_session)
    storage.save(f"{storage.setting('DIRECTORY')}/x/stray", b"left behind")
    out, err = io.StringIO(), io.StringIO()
    call_command("agent_sessions_files", "--grace", "0s", stdout=out, stderr=err)
    assert "Found 1 unreferenced attachments, 1 stray files." in err.getvalue()
    assert len(stored_files(file_storage)) == 3
    call_command("agent_sessions_files", "--delete", "--grace", "0s", stdout=out, stderr=err)
    assert "Removed 1 unreferenced attachments, 1 stray files." in err.getvalue()
    assert len(stored_files(file_storage)) == 1


def test_an_upload_waiting_for_its_message_is_an_orphan_only_after_the_grace(
    make_user, file_storage
):
    alice = make_user("alice")
    uploads.accept(alice, "c-up", name="a.png", data=png(4, 4), content_type="image/png")
    an_hour_ago = timezone.now() - timedelta(hours=1)
    assert orphans.unreferenced(before=an_hour_ago) == {}
    assert orphans.remove_unreferenced(before=an_hour_ago) == []
    assert len(stored_files(file_storage)) == 1
    out, err = io.StringIO(), io.StringIO()
    call_command("agent_sessions_files", "--delete", stdout=out, stderr=err)  # 1h grace
    assert "Removed 0 unreferenced attachments" in err.getvalue()
    later = timezone.now() + timedelta(seconds=1)
    assert len(orphans.remove_unreferenced(before=later)) == 1
    assert stored_files(file_storage) == []
