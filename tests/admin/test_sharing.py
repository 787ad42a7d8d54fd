"""The share links' admin: listed, read-only, and revoked by an action."""

from __future__ import annotations

import pytest
from django.urls import reverse

from django_agent_sessions.models import AgentSession, SharedLink
from tests.admin.helpers import staff

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:django_agent_sessions_sharedlink_changelist")


def test_links_are_listed_and_revoked_with_the_action(client, django_user_model):
    owner = django_user_model.objects.create_user("owner")
    row = AgentSession.objects.create(session_id="talk", owner=owner, title="Kept title")
    link = SharedLink.objects.create(session=row, created_by=owner, up_to_item_id=3)
    client.force_login(staff("reviewer", "view_sharedlink"))
    page = client.get(CHANGELIST).text
    assert "Kept title" in page
    assert link.token[:8] in page
    answer = client.post(CHANGELIST, {"action": "revoke", "_selected_action": [link.pk]})
    assert answer.status_code == 302
    link.refresh_from_db()
    assert link.revoked_at is not None


def test_nobody_adds_or_edits_a_link_here(client, django_user_model):
    owner = django_user_model.objects.create_user("owner")
    row = AgentSession.objects.create(session_id="talk", owner=owner)
    link = SharedLink.objects.create(session=row, created_by=owner)
    client.force_login(django_user_model.objects.create_superuser("root", "r@example.com", "pw"))
    assert client.get(reverse("admin:django_agent_sessions_sharedlink_add")).status_code == 403
    change = reverse("admin:django_agent_sessions_sharedlink_change", args=[link.pk])
    page = client.get(change).text
    assert 'name="show_tools"' not in page  # shown, not editable
