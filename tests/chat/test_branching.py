"""The chat's "Branch from here": what came before a user message, in a new conversation."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.urls import reverse

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession, SessionItem

pytestmark = pytest.mark.django_db(transaction=True)

TURNS = [
    {"role": "user", "content": "first question"},
    {"role": "assistant", "content": "first answer"},
    {"role": "user", "content": [{"type": "input_text", "text": "second question"}]},
    {"role": "assistant", "content": "second answer"},
]


def _branch(client, session_id: str, item_id: object):
    return client.post(
        reverse("django_agent_sessions:branch", args=[session_id]), {"item_id": item_id}
    )


def test_a_branch_holds_what_came_before_the_message_and_offers_its_text(client, alice):
    async_to_sync(DjangoSession("c-1", owner=alice).add_items)(TURNS)
    second = SessionItem.objects.filter(session__session_id="c-1").order_by("id")[2].pk
    client.force_login(alice)

    response = _branch(client, "c-1", second)
    assert response.status_code == 200
    body = response.json()
    assert body["text"] == "second question"
    new_id = body["url"].rstrip("/").rsplit("/", 1)[-1]
    assert body["url"] == reverse("django_agent_sessions:conversation", args=[new_id])
    assert async_to_sync(DjangoSession(new_id, owner=alice).get_items)() == TURNS[:2]
    branch = AgentSession.objects.get(session_id=new_id)
    assert (branch.owner_id, branch.branched_from.session_id) == (alice.pk, "c-1")
    assert client.get(body["url"]).status_code == 200


def test_only_ones_own_user_messages_branch(client, alice):
    async_to_sync(DjangoSession("c-1", owner=alice).add_items)(TURNS)
    reply = SessionItem.objects.filter(session__session_id="c-1").order_by("id")[1].pk
    client.force_login(alice)
    assert _branch(client, "c-1", reply).status_code == 400
    assert _branch(client, "c-1", "first").status_code == 400
    assert _branch(client, "c-none", 1).status_code == 404
    client.force_login(User.objects.create_user("bob"))
    assert _branch(client, "c-1", reply + 1).status_code == 404
    assert AgentSession.objects.count() == 1
