"""The owner's share views: the Share action makes a link (JSON), the list shows one's
links, Revoke ends one; all 404 while ``SHARE_LINKS`` is off, the Share UI too."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from django_agent_sessions.models import SharedLink
from tests.chat.helpers import add, logged_in, url
from tests.conftest import user_message

pytestmark = pytest.mark.django_db(transaction=True)


def share_links(settings, value: str) -> None:
    settings.AGENT_SESSIONS = {**getattr(settings, "AGENT_SESSIONS", {}), "SHARE_LINKS": value}


def test_the_share_action_makes_a_link_the_list_shows_and_revoke_ends(settings, make_user):
    share_links(settings, "login")
    owner = make_user("owner")
    add("talk", owner, user_message("Hi"))
    client = logged_in(owner)
    page = client.get(url("conversation", "talk")).content.decode()
    assert 'id="share-button"' in page
    assert "chat/sharing.js" in page
    answer = client.post(url("share", "talk"), {"show_tools": "1", "expires": "7d"})
    assert answer.status_code == 200
    link = SharedLink.objects.get()
    assert answer.json()["url"].endswith(f"/chat/share/{link.token}/")
    assert link.show_tools
    assert link.expires_at is not None
    assert link.up_to_item_id is not None
    listing = client.get(reverse("django_agent_sessions:share_links")).content.decode()
    assert f"/share/{link.token}/revoke/" in listing  # its Revoke button
    revoked = client.post(reverse("django_agent_sessions:share_revoke", args=[link.token]))
    assert revoked.status_code == 302
    link.refresh_from_db()
    assert link.revoked_at is not None
    again = client.get(reverse("django_agent_sessions:share_links")).content.decode()
    assert f"/share/{link.token}/revoke/" not in again


def test_bad_requests_and_someone_elses_conversation(settings, make_user):
    share_links(settings, "public")
    owner, other = make_user("owner"), make_user("other")
    add("talk", owner, user_message("Hi"))
    assert logged_in(other).post(url("share", "talk")).status_code == 404
    assert logged_in(owner).post(url("share", "talk"), {"expires": "1y"}).status_code == 400
    assert Client().post(url("share", "talk")).status_code == 302  # the login page
    assert not SharedLink.objects.exists()


def test_off_hides_the_share_ui_and_every_view_answers_404(settings, make_user):
    share_links(settings, "off")
    owner = make_user("owner")
    add("talk", owner, user_message("Hi"))
    client = logged_in(owner)
    page = client.get(url("conversation", "talk")).content.decode()
    assert "share-button" not in page
    assert "sharing.js" not in page
    assert client.post(url("share", "talk")).status_code == 404
    assert client.get(reverse("django_agent_sessions:share_links")).status_code == 404
    assert Client().get(reverse("django_agent_sessions:share_links")).status_code == 404
