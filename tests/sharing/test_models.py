"""``SharedLink``: unguessable tokens, "update" mode, and when a link is live."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from django_agent_sessions.models import AgentSession, SharedLink
from django_agent_sessions.sharing.models import new_token

pytestmark = pytest.mark.django_db


def test_tokens_are_long_random_and_distinct():
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200
    assert all(len(token) >= 43 for token in tokens)


def test_live_revoked_expired_and_following(django_user_model):
    owner = django_user_model.objects.create_user("owner")
    row = AgentSession.objects.create(session_id="s", owner=owner)
    link = SharedLink.objects.create(session=row, created_by=owner)
    assert link.is_live()
    assert link.follows
    assert not link.show_tools  # tools hidden by default
    link.expires_at = timezone.now() + timedelta(hours=1)
    assert link.is_live()
    link.expires_at = timezone.now() - timedelta(seconds=1)
    assert not link.is_live()
    link.expires_at, link.revoked_at = None, timezone.now()
    assert not link.is_live()
    link.up_to_item_id = 5
    assert not link.follows
    assert str(link) == link.token[:8] + "…"
    row.delete()
    assert not SharedLink.objects.exists()  # a deleted conversation takes its links
