"""``admin.read_only``: the record pages (runs, tool decisions, ratings) let staff view
the app's records but never add or change them; only ratings may be deleted there; a row
links to its conversation's page."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.test import RequestFactory

from django_agent_sessions.admin.read_only import conversation_link, conversation_url
from django_agent_sessions.models import AgentRun, AgentSession, Feedback, ToolApproval

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser_request(django_user_model: Any) -> Any:
    request = RequestFactory().get("/admin/")
    request.user = django_user_model.objects.create_superuser("root", "r@example.com", "pw")
    return request


@pytest.mark.parametrize("model", [AgentRun, ToolApproval])
def test_a_record_page_only_reads(superuser_request: Any, model: Any) -> None:
    page = admin.site._registry[model]
    assert page.has_view_permission(superuser_request)
    assert not page.has_add_permission(superuser_request)
    assert not page.has_change_permission(superuser_request)
    assert not page.has_delete_permission(superuser_request)


def test_ratings_are_not_made_or_changed_here_but_may_be_deleted(superuser_request: Any) -> None:
    page = admin.site._registry[Feedback]
    assert not page.has_add_permission(superuser_request)
    assert not page.has_change_permission(superuser_request)
    assert page.has_delete_permission(superuser_request)


def test_a_row_links_to_its_conversation_with_its_label_escaped() -> None:
    conversation = AgentSession.objects.create(session_id="support-1")
    url = conversation_url(conversation.pk)
    assert url == f"/admin/django_agent_sessions/agentsession/{conversation.pk}/change/"
    assert conversation_link(conversation.pk, "<b>x</b>") == (
        f'<a href="{url}">&lt;b&gt;x&lt;/b&gt;</a>'
    )
