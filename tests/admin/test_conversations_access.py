"""The conversation admin through the Django test client, as each kind of user."""

from __future__ import annotations

import pytest
from django.urls import reverse

from django_agent_sessions.models import SessionItem
from tests.admin.helpers import (
    CHANGELIST,
    action,
    change_url,
    delete_url,
    staff,
)
from tests.conversations import make_conversation, transcript_items

pytestmark = pytest.mark.django_db


def test_anonymous_is_sent_to_login(client):
    conversation = make_conversation("c-1", transcript_items())
    for url in (CHANGELIST, change_url(conversation), delete_url(conversation)):
        response = client.get(url)
        assert response.status_code == 302
        assert reverse("admin:login") in response["Location"]


def test_staff_without_permission_is_refused(client):
    client.force_login(staff("nobody"))
    assert client.get(CHANGELIST).status_code == 403


def test_viewer_reads_everything_and_changes_nothing(viewer):
    conversation = make_conversation("c-1", transcript_items(), title="Weather")
    listing = viewer.get(CHANGELIST)
    assert listing.status_code == 200
    assert "c-1" in listing.text
    assert "addlink" not in listing.text
    actions = [choice[0] for choice in listing.context["action_form"].fields["action"].choices]
    assert actions == ["", "export_json"]

    page = viewer.get(change_url(conversation))
    assert page.status_code == 200
    assert "It is sunny in Paris." in page.text
    assert 'name="_save"' not in page.text
    assert "deletelink" not in page.text

    assert viewer.post(change_url(conversation), {"title": "hacked"}).status_code == 403
    assert viewer.get(delete_url(conversation)).status_code == 403
    assert viewer.post(delete_url(conversation), {"post": "yes"}).status_code == 403
    add = reverse("admin:django_agent_sessions_agentsession_add")
    assert viewer.get(add).status_code == 403
    action(viewer, "clear_history", [conversation], post="yes")
    action(viewer, "delete_selected", [conversation], post="yes")
    conversation.refresh_from_db()
    assert conversation.title == "Weather"
    assert conversation.item_count == 7
    assert SessionItem.objects.filter(session=conversation).count() == 7


def test_superuser_cannot_add_or_edit_either(superuser):
    conversation = make_conversation("c-1", transcript_items(), title="Weather")
    page = superuser.get(change_url(conversation))
    assert 'name="_save"' not in page.text
    assert "deletelink" in page.text
    add = reverse("admin:django_agent_sessions_agentsession_add")
    assert superuser.get(add).status_code == 403
    assert superuser.post(change_url(conversation), {"title": "x"}).status_code == 403
    form = superuser.get(CHANGELIST).context["action_form"]
    actions = [choice[0] for choice in form.fields["action"].choices]
    assert actions == ["", "delete_selected", "export_json", "clear_history"]


def test_session_items_have_no_admin_of_their_own(superuser):
    assert superuser.get("/admin/django_agent_sessions/sessionitem/").status_code == 404
