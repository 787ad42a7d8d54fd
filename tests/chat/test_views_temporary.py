"""A temporary chat in the packaged chat and everywhere conversations are listed: the
page starts one and says it is one; it is never in the sidebar's list, the search, an
export, the feedback export or the admin's lists, while the same person's other
conversation, filled the same way, is in each."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from django_agent_sessions.models import AgentSession
from django_agent_sessions.transfer import export_chunks
from tests.attachment_helpers import file_storage  # noqa: F401
from tests.chat.helpers import logged_in, url
from tests.temporary_helpers import fill

pytestmark = pytest.mark.django_db(transaction=True)

WORD = "zanzibar"  # in both conversations' titles


@pytest.fixture
def two_chats(alice: Any, file_storage: Any) -> tuple[AgentSession, AgentSession]:  # noqa: F811
    kept = AgentSession.objects.create(session_id="kept", owner=alice, title=f"{WORD} kept")
    temp = AgentSession.objects.create(
        session_id="temp", owner=alice, title=f"{WORD} temporary", temporary=True
    )
    fill(kept, alice)
    fill(temp, alice)
    return kept, temp


def test_new_temporary_chat_link_and_marks(alice, two_chats):
    client = logged_in(alice)
    new = client.get("/chat/new/?temporary=1")
    assert new.url.endswith("/?temporary=1")
    page = client.get(new.url).content.decode()
    assert 'id="new-temporary"' in page
    assert "data-temporary" in page
    assert 'id="temporary-note"' in page
    plain = client.get(client.get("/chat/new/").url).content.decode()
    assert "data-temporary" not in plain
    saved = client.get(url("conversation", "temp")).content.decode()
    assert "data-temporary" in saved
    assert "data-temporary" not in client.get(url("conversation", "kept")).content.decode()


def test_forced_temporary_chats_need_no_link(alice, settings):
    settings.AGENT_SESSIONS = {"FORCE_TEMPORARY": "tests.chat.test_views_temporary.forced"}
    client = logged_in(alice)
    page = client.get(client.get("/chat/new/").url).content.decode()
    assert "data-temporary" in page
    assert 'id="new-temporary"' not in page


def forced(user: Any) -> bool:
    """A rule of the kind a project writes: forced for the members of a group."""
    return user.username == "alice"


def test_the_sidebar_and_the_latest_conversation_leave_it_out(alice, two_chats):
    client = logged_in(alice)
    listed = client.get("/chat/conversations/").json()["conversations"]
    assert [row["id"] for row in listed] == ["kept"]
    archived = client.get("/chat/conversations/?archived=1").json()["conversations"]
    assert [row["id"] for row in archived] == ["kept"]
    page = client.get(url("conversation", "kept")).content.decode()
    assert 'href="/chat/c/temp/"' not in page
    assert client.get("/chat/").url == "/chat/c/kept/"


def test_the_search_leaves_it_out(alice, two_chats):
    client = logged_in(alice)
    for archived in ("", "&archived=1"):
        results = client.get(f"/chat/search/?q={WORD}{archived}").json()["results"]
        assert {hit["session_id"] for hit in results} == {"kept"}


def test_exports_leave_it_out(alice, two_chats):
    exported = json.loads("".join(export_chunks(AgentSession.objects.all())))
    assert [row["session_id"] for row in exported["conversations"]] == ["kept"]
    out = io.StringIO()
    call_command("agent_sessions_export", "--all", stdout=out, stderr=io.StringIO())
    assert [row["session_id"] for row in json.loads(out.getvalue())["conversations"]] == ["kept"]
    ratings = io.StringIO()
    call_command("agent_sessions_feedback_export", stdout=ratings, stderr=io.StringIO())
    records = [json.loads(line) for line in ratings.getvalue().splitlines()]
    assert [record["conversation"] for record in records] == ["kept"]


def test_the_admins_lists_leave_it_out(two_chats):
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.login(username="root", password="pw")
    page = client.get("/admin/django_agent_sessions/agentsession/").content.decode()
    assert f"{WORD} kept" in page
    assert f"{WORD} temporary" not in page
    searched = client.get(f"/admin/django_agent_sessions/agentsession/?q={WORD}").content
    assert f"{WORD} temporary" not in searched.decode()
    _kept, temp = two_chats
    assert client.get(
        f"/admin/django_agent_sessions/agentsession/{temp.pk}/change/"
    ).status_code in (302, 404)
    ratings = client.get("/admin/django_agent_sessions/feedback/").content.decode()
    assert ratings.count('class="action-select"') == 1
    runs = client.get("/admin/django_agent_sessions/agentrun/").content.decode()
    kept, temp = two_chats
    assert f"/agentsession/{kept.pk}/change/" in runs
    assert f"/agentsession/{temp.pk}/change/" not in runs
