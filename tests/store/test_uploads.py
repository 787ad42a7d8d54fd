"""Files people give the chat: stored once per conversation, within each person's limits,
and read back as the parts a run gives its model."""

from __future__ import annotations

import base64
import threading

import pytest
from asgiref.sync import async_to_sync
from django import db
from django.contrib.auth.models import User
from django.db import IntegrityError

from django_agent_sessions import DjangoSession
from django_agent_sessions.exceptions import SessionOwnershipError, UploadRefused
from django_agent_sessions.models import AgentSession, Attachment
from django_agent_sessions.store import uploads
from tests.attachment_helpers import data_url, png, stored_files

pytestmark = pytest.mark.django_db(transaction=True)


def _limits(settings, **limits):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "ATTACHMENTS": limits}


def test_a_file_is_stored_in_a_conversation_created_for_its_owner(file_storage):
    alice = User.objects.create_user("alice")
    image = png(20, 10)
    stored = uploads.accept(alice, "c-new", name="dot.png", data=image, content_type="image/png")

    conversation = AgentSession.objects.get(session_id="c-new")
    assert conversation.owner_id == alice.pk
    row = Attachment.objects.get()
    assert (row.session_id, row.owner_id, row.name, row.size) == (
        conversation.pk,
        alice.pk,
        "dot.png",
        len(image),
    )
    assert stored == uploads.StoredFile(row.pk, "dot.png", "image/png", len(image))
    assert [path.read_bytes() for path in stored_files(file_storage)] == [image]


def test_the_same_file_twice_is_one_file_and_counts_once(settings, file_storage):
    _limits(settings, UPLOAD_RATE="1/h")
    alice = User.objects.create_user("alice")
    image = png(8, 8)
    first = uploads.accept(alice, "c-1", name="a.png", data=image, content_type="image/png")
    again = uploads.accept(alice, "c-1", name="b.png", data=image, content_type="image/png")
    assert again.id == first.id
    assert len(stored_files(file_storage)) == 1


def test_someone_elses_conversation_takes_no_file(file_storage):
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    uploads.accept(alice, "c-a", name="a.png", data=png(4, 4), content_type="image/png")
    with pytest.raises(SessionOwnershipError):
        uploads.accept(bob, "c-a", name="b.png", data=png(5, 5), content_type="image/png")
    assert Attachment.objects.count() == 1
    assert len(stored_files(file_storage)) == 1


def test_the_rate_counts_every_conversation_of_the_person(settings, file_storage):
    _limits(settings, UPLOAD_RATE="2/h")
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    for index in range(2):
        uploads.accept(alice, f"c-{index}", name="", data=png(4, 4), content_type="image/png")
    with pytest.raises(UploadRefused) as refused:
        uploads.accept(alice, "c-9", name="", data=png(4, 4), content_type="image/png")
    assert refused.value.code == "rate_limited"
    uploads.accept(bob, "c-b", name="", data=png(4, 4), content_type="image/png")  # his own
    assert Attachment.objects.filter(owner=alice).count() == 2
    assert len(stored_files(file_storage)) == 3


def test_the_total_a_person_keeps_is_limited(settings, file_storage):
    image = png(20, 20)
    _limits(settings, MAX_USER_BYTES=len(image) * 2 + 10)
    alice = User.objects.create_user("alice")
    uploads.accept(alice, "c-1", name="", data=image, content_type="image/png")
    uploads.accept(alice, "c-2", name="", data=png(20, 20), content_type="image/png")
    with pytest.raises(UploadRefused) as refused:
        uploads.accept(alice, "c-3", name="", data=png(20, 20), content_type="image/png")
    assert refused.value.code == "quota_exceeded"
    assert Attachment.objects.count() == 2
    assert len(stored_files(file_storage)) == 2


def test_a_failed_upload_leaves_no_file(file_storage):
    alice = User.objects.create_user("alice")
    with pytest.raises(IntegrityError):  # the row's INSERT fails after the file is written
        uploads.accept(alice, "c-1", name="", data=png(4, 4), content_type=None)  # type: ignore[arg-type]
    assert stored_files(file_storage) == []
    assert not Attachment.objects.exists()


def test_a_message_gets_its_files_as_model_input_in_its_order(file_storage):
    alice = User.objects.create_user("alice")
    image, text = png(6, 6), b"plain words\n"
    picture = uploads.accept(alice, "c-1", name="p.png", data=image, content_type="image/png")
    notes = uploads.accept(alice, "c-1", name="n.txt", data=text, content_type="text/plain")
    parts, shown = uploads.for_message.sync("c-1", alice.pk, (notes.id, picture.id))
    assert parts == [
        {
            "type": "input_file",
            "file_data": "data:text/plain;base64," + base64.b64encode(text).decode(),
            "filename": "n.txt",
        },
        {"type": "input_image", "image_url": data_url(image), "detail": "auto"},
    ]
    assert shown == [notes, picture]


def test_a_message_cannot_name_a_file_of_another_conversation_or_person(file_storage):
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    mine = uploads.accept(alice, "c-1", name="", data=png(4, 4), content_type="image/png")
    uploads.accept(alice, "c-2", name="", data=png(5, 5), content_type="image/png")
    with pytest.raises(UploadRefused) as refused:
        uploads.for_message.sync("c-2", alice.pk, (mine.id,))
    assert refused.value.code == "unknown_file"
    with pytest.raises(UploadRefused):
        uploads.for_message.sync("c-1", bob.pk, (mine.id,))


def test_history_names_stored_files_and_reads_none(file_storage):
    alice = User.objects.create_user("alice")
    image = png(3, 3)  # far below OFFLOAD_CHARS
    message = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": data_url(image)},
        ],
    }
    # offload_chars=0, as the chat's runs: even a small file is stored as a file.
    session = DjangoSession("c-1", owner=alice, offload_chars=0)
    async_to_sync(session.add_items)([message, {"role": "user", "content": "plain"}])
    for path in stored_files(file_storage):
        path.unlink()  # history must not need the bytes
    conversation = AgentSession.objects.get()
    rows = list(conversation.items.order_by("id").values_list("id", "created_at", "payload"))

    shown = uploads.shown_rows(conversation.pk, rows)
    row = Attachment.objects.get()
    assert shown[0][3] == (
        {"id": row.pk, "name": "", "content_type": "image/png", "size": len(image)},
    )
    assert shown[1][3] == ()
    assert uploads.files_by_item(conversation.pk, rows) == {rows[0][0]: shown[0][3]}


def test_the_rate_is_exact_when_a_person_uploads_many_files_at_once(settings, file_storage):
    _limits(settings, UPLOAD_RATE="3/h")
    alice = User.objects.create_user("alice")
    images = [png(4 + index, 4) for index in range(6)]
    start = threading.Barrier(len(images))
    outcomes: list[str] = []

    def upload(index: int) -> None:
        start.wait()
        try:
            uploads.accept(
                alice, f"c-{index}", name="", data=images[index], content_type="image/png"
            )
            outcomes.append("stored")
        except UploadRefused as refused:
            outcomes.append(refused.code)
        finally:
            db.connection.close()

    threads = [threading.Thread(target=upload, args=(index,)) for index in range(len(images))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["rate_limited"] * 3 + ["stored"] * 3
    assert Attachment.objects.count() == 3
    assert len(stored_files(file_storage)) == 3
