"""``store.temporary``: a temporary chat's pages counted in and out, its removal once
they are gone (after the grace, never while a page or a run holds it) or at the TTL,
and nothing of it left in any table or in the storage."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import temporary
from tests.attachment_helpers import file_storage, stored_files  # noqa: F401
from tests.store.helpers import write
from tests.temporary_helpers import fill, left_behind

pytestmark = pytest.mark.django_db


def chat(session_id: str, owner: Any, *, is_temporary: bool = True) -> AgentSession:
    row = AgentSession.objects.create(session_id=session_id, owner=owner, temporary=is_temporary)
    return row


def test_pages_are_counted_in_and_out_of_temporary_chats_only(make_user):
    owner = make_user("alice")
    kept, temp = chat("kept", owner, is_temporary=False), chat("temp", owner)
    assert temporary.page_opened.sync(kept.pk) is False
    assert temporary.page_closed.sync(kept.pk) is None
    assert temporary.page_opened.sync(temp.pk) is True
    assert temporary.page_opened.sync(temp.pk) is True
    assert temporary.page_closed.sync(temp.pk) == 1
    assert temporary.page_closed.sync(temp.pk) == 0
    assert temporary.page_closed.sync(temp.pk) == 0  # never below zero
    temp.refresh_from_db()
    assert temp.left_at is not None
    temporary.page_opened.sync(temp.pk)
    temp.refresh_from_db()
    assert (temp.open_pages, temp.left_at) == (1, None)


def test_a_left_chat_goes_after_the_grace_and_only_if_no_page_came_back(make_user):
    temp = chat("temp", make_user("alice"))
    temporary.page_opened.sync(temp.pk)
    temporary.page_closed.sync(temp.pk)
    now = timezone.now()
    assert temporary.remove_if_left.sync(temp.pk, 30, now=now) is False  # within the grace
    temporary.page_opened.sync(temp.pk)  # a reload
    later = now + timedelta(seconds=31)
    assert temporary.remove_if_left.sync(temp.pk, 30, now=later) is False
    temporary.page_closed.sync(temp.pk)
    assert temporary.remove_if_left.sync(temp.pk, 0, now=timezone.now()) is True
    assert not AgentSession.objects.filter(pk=temp.pk).exists()


def test_a_chat_a_run_holds_is_not_removed_when_its_pages_leave(make_user):
    temp = chat("temp", make_user("alice"))
    run = AgentRun.objects.create(
        session=temp, status="waiting", lease_expires_at=timezone.now() + timedelta(hours=1)
    )
    temporary.page_closed.sync(temp.pk)
    assert temporary.remove_if_left.sync(temp.pk, 0) is False
    AgentRun.objects.filter(pk=run.pk).update(status="completed")
    assert temporary.remove_if_left.sync(temp.pk, 0) is True


def test_a_conversation_that_is_not_temporary_is_never_removed(make_user):
    kept = chat("kept", make_user("alice"), is_temporary=False)
    AgentSession.objects.filter(pk=kept.pk).update(
        open_pages=0, left_at=timezone.now() - timedelta(days=9)
    )
    assert temporary.remove_if_left.sync(kept.pk, 0) is False
    AgentSession.objects.filter(pk=kept.pk).update(updated_at=timezone.now() - timedelta(days=9))
    assert temporary.expire(timedelta(hours=1), 30) == 0
    assert AgentSession.objects.filter(pk=kept.pk).exists()


def test_the_ttl_takes_idle_temporary_chats_even_with_a_page_open(make_user):
    owner = make_user("alice")
    idle, active = chat("idle", owner), chat("active", owner)
    temporary.page_opened.sync(idle.pk)
    temporary.page_opened.sync(active.pk)
    AgentSession.objects.filter(pk=idle.pk).update(updated_at=timezone.now() - timedelta(hours=2))
    assert temporary.expire(timedelta(hours=1), 30, batch_size=1) == 1
    assert list(AgentSession.objects.values_list("session_id", flat=True)) == ["active"]


def test_the_sweep_takes_chats_left_longer_than_the_grace(make_user, settings):
    """A worker that stopped before its timer fired: the sweep removes the chat."""
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "TEMPORARY_GRACE_SECONDS": 5}
    owner = make_user("alice")
    left, open_ = chat("left", owner), chat("open", owner)
    temporary.page_opened.sync(open_.pk)
    AgentSession.objects.filter(pk=left.pk).update(left_at=timezone.now() - timedelta(seconds=6))
    assert temporary.sweep() == 1
    assert temporary.is_temporary("open")
    assert not temporary.is_temporary("left")


def test_a_removed_chat_leaves_no_row_and_no_file(make_user, file_storage):  # noqa: F811
    owner = make_user("alice")
    temp, kept = chat("temp", owner), chat("kept", owner, is_temporary=False)
    fill(temp, owner)
    fill(kept, owner)
    assert set(left_behind(temp.pk)) >= {"AgentSession", "SessionItem", "Attachment"}
    files = stored_files(file_storage)
    assert len(files) == 2
    AgentSession.objects.filter(pk=temp.pk).update(updated_at=timezone.now() - timedelta(days=2))
    assert temporary.expire(timedelta(days=1), 30) == 1
    assert left_behind(temp.pk) == {}
    assert len(stored_files(file_storage)) == 1  # the kept conversation's
    assert left_behind(kept.pk)["SessionItem"] == 1


def test_is_temporary(make_user):
    chat("temp", make_user("alice"))
    write("plain", {"role": "user", "content": "hi"})
    assert temporary.is_temporary("temp")
    assert not temporary.is_temporary("plain")
    assert not temporary.is_temporary("missing")
