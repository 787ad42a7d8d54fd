"""The store's owner is the context's signed-in user; nobody otherwise."""

from __future__ import annotations

from types import SimpleNamespace

from django.contrib.auth.models import AnonymousUser

from django_agent_sessions.protocols.chatkit import ChatKitContext
from django_agent_sessions.protocols.chatkit.context import owner_id


def test_the_owner_is_the_signed_in_users_key():
    user = SimpleNamespace(pk=7, is_authenticated=True)
    assert owner_id(ChatKitContext(user=user)) == 7
    assert owner_id(SimpleNamespace(user=user)) == 7  # any context with a user


def test_anonymous_users_and_contexts_without_one_own_nothing():
    assert owner_id(ChatKitContext(user=AnonymousUser())) is None
    assert owner_id(ChatKitContext(user=None)) is None
    assert owner_id({"user_id": "test_user"}) is None
