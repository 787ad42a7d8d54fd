"""Deleting a conversation through the ORM takes its files out of the storage once the
transaction commits, as the admin's delete and retention do: the conversation's own
``delete()``, a queryset's and its owner's; a rollback keeps them; and every way of
removing a conversation's attachments deletes each file once.

The storage is the tests' own backend under its own alias (``bucket``), which logs what
it is asked to delete (``deleted``)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import transaction
from django.test import Client

from django_agent_sessions import DjangoSession, retention
from django_agent_sessions.models import AgentSession, Attachment
from django_agent_sessions.store import owned
from tests.admin.helpers import delete_url
from tests.attachment_helpers import image_message, png
from tests.files.dict_storage import Stored

pytestmark = pytest.mark.django_db(transaction=True)


def _conversation(session_id: str, *sizes: int, owner: Any = None) -> list[str]:
    """A conversation holding an image of each size as a file; their storage names."""
    session = DjangoSession(session_id, owner=owner)
    items: list[Any] = [image_message(png(size, size)) for size in sizes]
    async_to_sync(session.add_items)(items)
    rows = Attachment.objects.filter(session__session_id=session_id)
    names = sorted(rows.values_list("storage_name", flat=True))
    assert len(names) == len(sizes)
    return names


def _pk(session_id: str) -> int:
    return int(AgentSession.objects.get(session_id=session_id).pk)


def _kept_rows() -> list[str]:
    return sorted(Attachment.objects.values_list("storage_name", flat=True))


def test_a_conversations_own_delete_removes_its_files(bucket, deleted):
    gone = _conversation("c-gone", 200, 201)
    kept = _conversation("c-kept", 202)
    assert sorted(bucket) == sorted(gone + kept)

    AgentSession.objects.get(session_id="c-gone").delete()

    assert sorted(bucket) == kept
    assert sorted(deleted) == gone
    assert _kept_rows() == kept


def test_deleting_the_owner_removes_their_conversations_files(bucket, deleted):
    leaving, staying = User.objects.create_user("leaving"), User.objects.create_user("staying")
    gone = _conversation("c-first", 200, owner=leaving) + _conversation(
        "c-second", 201, 202, owner=leaving
    )
    kept = _conversation("c-other", 203, owner=staying)

    leaving.delete()

    assert sorted(bucket) == kept
    assert sorted(deleted) == sorted(gone)
    assert _kept_rows() == kept


def test_a_querysets_delete_removes_the_files(bucket, deleted):
    gone = _conversation("c-old-1", 200) + _conversation("c-old-2", 201, 202)
    kept = _conversation("c-new", 203)

    AgentSession.objects.filter(session_id__startswith="c-old-").delete()

    assert sorted(bucket) == kept
    assert sorted(deleted) == sorted(gone)
    assert _kept_rows() == kept


def _delete_then_fail(session_id: str, bucket: dict[str, Stored]) -> None:
    with transaction.atomic():
        AgentSession.objects.filter(session_id=session_id).delete()
        assert not Attachment.objects.exists()
        assert len(bucket) == 2  # the files wait for the commit
        raise RuntimeError("rolled back")


def test_the_files_stay_until_the_delete_commits_and_after_a_rollback(bucket, deleted):
    names = _conversation("c-kept", 200, 201)

    with pytest.raises(RuntimeError, match="rolled back"):
        _delete_then_fail("c-kept", bucket)
    assert sorted(bucket) == names
    assert _kept_rows() == names

    # A savepoint rolled back inside a transaction that commits keeps them too.
    with transaction.atomic():
        with contextlib.suppress(RuntimeError):
            _delete_then_fail("c-kept", bucket)
        assert _kept_rows() == names
    assert sorted(bucket) == names
    assert deleted == []

    with transaction.atomic():
        AgentSession.objects.get(session_id="c-kept").delete()
        assert sorted(bucket) == names
    assert bucket == {}
    assert sorted(deleted) == names


def _orphaned(session_id: str, owner: User) -> None:
    """The conversation's items popped (its files left unreferenced), then the orphan
    command's ``--delete``."""
    session = DjangoSession(session_id, owner=owner)
    while async_to_sync(session.pop_item)() is not None:
        pass
    out, err = io.StringIO(), io.StringIO()
    call_command("agent_sessions_files", "--delete", "--grace", "0s", stdout=out, stderr=err)


def _admin_delete(session_id: str, owner: User) -> None:
    client = Client()
    client.force_login(User.objects.create_superuser("admin", "admin@example.com", "pw"))
    conversation = AgentSession.objects.get(session_id=session_id)
    assert client.post(delete_url(conversation), {"post": "yes"}).status_code == 302


def _pruned(session_id: str, owner: User) -> None:
    idle = AgentSession.objects.get(session_id=session_id).updated_at - timedelta(days=45)
    AgentSession.objects.filter(session_id=session_id).update(updated_at=idle)
    retention.prune(timedelta(days=30))


REMOVALS: dict[str, Callable[[str, User], Any]] = {
    "instance delete()": lambda sid, _: AgentSession.objects.get(session_id=sid).delete(),
    "queryset delete()": lambda sid, _: AgentSession.objects.filter(session_id=sid).delete(),
    "the owner's delete()": lambda _, owner: owner.delete(),
    "the admin's delete": _admin_delete,
    "delete_conversations": lambda sid, _: retention.delete_conversations([_pk(sid)]),
    "clear_conversations": lambda sid, _: retention.clear_conversations([_pk(sid)]),
    "prune": _pruned,
    "the chat's delete": owned.delete,
    "the orphan command": _orphaned,
}


@pytest.mark.parametrize("remove", REMOVALS.values(), ids=REMOVALS.keys())
def test_every_removal_deletes_each_file_once(bucket, deleted, remove):
    owner = User.objects.create_user("owner")
    names = _conversation("c-removed", 200, 201, owner=owner)
    kept = _conversation("c-kept", 202)

    remove("c-removed", owner)

    assert sorted(deleted) == names  # each once: never by both a statement and a signal
    assert sorted(bucket) == kept
    assert _kept_rows() == kept
