"""Who is asking an HTTP stream (``sse/visitor.py``): a signed-in user finds their own
conversation; anonymous visitors are refused 401 unless allowed, another user's
conversation 403."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.sessions.backends.db import SessionStore
from django.http import HttpRequest
from django.test import RequestFactory

from django_agent_sessions.sse.visitor import Refused, visitor_for
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db(transaction=True)


def _request(user: User | AnonymousUser) -> HttpRequest:
    request = RequestFactory().get("/chat/c/c-1/events/")
    request.user = user
    request.session = SessionStore()
    return request


@sync_to_async
def _conversation_of(username: str) -> tuple[User, int]:
    owner = User.objects.create_user(username)
    return owner, make_conversation(f"c-{username}", [], owner=owner).pk


async def test_the_owner_finds_their_conversation_and_a_new_id_is_not_found_yet():
    alice, pk = await _conversation_of("alice")
    visitor = await visitor_for(_request(alice), "c-alice")
    assert visitor.conversation_pk == pk
    fresh = await visitor_for(_request(alice), "c-new")
    assert fresh.conversation_pk is None


async def test_another_users_conversation_is_refused_403():
    await _conversation_of("alice")
    bob = await sync_to_async(User.objects.create_user)("bob")
    with pytest.raises(Refused) as refused:
        await visitor_for(_request(bob), "c-alice")
    assert refused.value.status == 403


async def test_an_anonymous_visitor_is_refused_401_unless_anonymous_use_is_allowed(settings):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "ALLOW_ANONYMOUS": False}
    with pytest.raises(Refused) as refused:
        await visitor_for(_request(AnonymousUser()), "c-1")
    assert refused.value.status == 401
