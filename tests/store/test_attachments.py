"""Attachments written and removed in the items' transactions."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from django_agent_sessions.files import inline
from django_agent_sessions.models import AgentSession, Attachment, SessionItem
from django_agent_sessions.serialization import EncodedItem
from django_agent_sessions.store import attachments
from django_agent_sessions.store import items as stored_items
from tests.attachment_helpers import image_message, png, stored_files
from tests.conftest import user_message

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_failed_transaction_leaves_no_file_behind(make_session, file_storage):
    session = make_session()
    _, files = inline.split_batch([image_message(png(300, 300)), user_message("x")], 1024)
    with_files = EncodedItem("{}", "message", "user", "", "")
    broken = EncodedItem(None, "message", "user", "", "")  # type: ignore[arg-type]
    with pytest.raises(IntegrityError):
        stored_items.append_items(session._scope, [with_files, broken], "", files)
    assert stored_files(file_storage) == []
    assert not Attachment.objects.exists()
    assert not SessionItem.objects.exists()


def test_one_file_twice_in_a_batch_is_stored_once(make_session, file_storage):
    session = make_session()
    image = png(300, 300)
    _, files = inline.split_batch([image_message(image), image_message(image)], 1024)
    encoded = [EncodedItem("{}", "message", "user", "", "")] * 2
    stored_items.append_items(session._scope, encoded, "", files)
    (attachment,) = Attachment.objects.all()
    payloads = list(SessionItem.objects.values_list("payload", flat=True))
    assert {ref["name"] for p in payloads for ref in inline.references(p)} == {
        attachment.storage_name
    }
    assert len(stored_files(file_storage)) == 1


def _remove_then_fail(pk: int) -> None:
    with transaction.atomic():
        attachments.remove_of("default", [pk])
        raise RuntimeError("rolled back")


def test_removed_files_go_only_when_the_transaction_commits(make_session, file_storage):
    session = make_session()
    encoded = [EncodedItem("{}", "message", "user", "", "")]
    _, files = inline.split_batch([image_message(png(300, 300))], 1024)
    stored_items.append_items(session._scope, encoded, "", files)
    pk = AgentSession.objects.get().pk
    with pytest.raises(RuntimeError, match="rolled back"):
        _remove_then_fail(pk)
    assert len(stored_files(file_storage)) == 1
    with transaction.atomic():
        attachments.remove_of("default", [pk])
        assert len(stored_files(file_storage)) == 1
    assert stored_files(file_storage) == []
    assert not Attachment.objects.exists()
