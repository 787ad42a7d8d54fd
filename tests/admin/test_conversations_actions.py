"""The conversation admin's actions: clearing history and exporting JSON."""

from __future__ import annotations

import json
import warnings

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from django_agent_sessions.models import SessionItem
from tests.admin.helpers import (
    CHANGELIST,
    action,
    change_url,
    delete_url,
    staff,
)
from tests.conversations import add_many_items, make_conversation, transcript_items

pytestmark = pytest.mark.django_db


def test_clear_history_asks_then_clears_and_keeps_the_rows(deleter):
    owner = User.objects.create_user("alice")
    kept = make_conversation("c-kept", transcript_items())
    chosen = [
        make_conversation("c-1", transcript_items(), owner=owner, title="One"),
        make_conversation("c-2", transcript_items()),
    ]
    confirm = action(deleter, "clear_history", chosen)
    assert confirm.status_code == 200
    assert "Are you sure you want to clear the history of the 2 selected conversations?" in (
        confirm.text
    )
    assert "Their 14 items will be deleted" in confirm.text
    assert SessionItem.objects.count() == 21

    done = action(deleter, "clear_history", chosen, post="yes")
    assert done.status_code == 302
    messages = [str(m) for m in deleter.get(done["Location"]).context["messages"]]
    assert messages == ["Cleared 2 conversations; 14 items removed."]
    for conversation in chosen:
        conversation.refresh_from_db()
        assert conversation.item_count == 0
        assert not SessionItem.objects.filter(session=conversation).exists()
    assert chosen[0].owner == owner
    assert chosen[0].title == "One"
    assert SessionItem.objects.filter(session=kept).count() == 7


def test_clear_history_needs_delete_permission_on_items(client):
    client.force_login(staff("half", "view_agentsession", "delete_agentsession"))
    conversation = make_conversation("c-1", transcript_items())
    actions = [c[0] for c in client.get(CHANGELIST).context["action_form"].fields["action"].choices]
    assert "clear_history" not in actions
    action(client, "clear_history", [conversation], post="yes")
    assert SessionItem.objects.filter(session=conversation).count() == 7
    # Deleting the conversation would delete its items too.
    assert "Cannot delete conversation" in client.get(delete_url(conversation)).text
    assert client.post(delete_url(conversation), {"post": "yes"}).status_code == 403


def test_export_action_downloads_items_in_order(viewer):
    conversation = make_conversation("c-1", transcript_items(), title="Weather")
    other = make_conversation("c-2", [{"role": "user", "content": "hi"}])
    response = action(viewer, "export_json", [conversation, other])
    assert response.status_code == 200
    document = json.loads(b"".join(response.streaming_content))
    assert document["format"] == "django-agent-sessions"
    exported = {c["session_id"]: c for c in document["conversations"]}
    assert [entry["item"] for entry in exported["c-1"]["items"]] == transcript_items()
    assert exported["c-1"]["title"] == "Weather"
    assert [entry["item"] for entry in exported["c-2"]["items"]] == [
        {"role": "user", "content": "hi"}
    ]


def test_export_link_on_the_change_page(viewer):
    conversation = make_conversation("c-1", transcript_items())
    export_url = reverse("admin:django_agent_sessions_agentsession_export", args=[conversation.pk])
    assert export_url in viewer.get(change_url(conversation)).text
    response = viewer.get(export_url)
    document = json.loads(b"".join(response.streaming_content))
    assert [c["session_id"] for c in document["conversations"]] == ["c-1"]
    assert viewer.get(export_url.replace(str(conversation.pk), "999999")).status_code == 404


@pytest.mark.django_db(transaction=True)
async def test_export_streams_under_asgi(async_client):
    from asgiref.sync import sync_to_async

    def prepare() -> list[int]:
        user = User.objects.create_superuser("root", "root@example.com", "pw")
        conversation = make_conversation("c-1", transcript_items())
        add_many_items(conversation, 2_000)
        return [user.pk, conversation.pk]

    user_pk, conversation_pk = await sync_to_async(prepare)()
    await async_client.aforce_login(await User.objects.aget(pk=user_pk))
    data = {"action": "export_json", "_selected_action": [conversation_pk]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Django warns when it must buffer a sync iterator
        response = await async_client.post(CHANGELIST, data)
        assert response.is_async
        body = b"".join([chunk async for chunk in response.streaming_content])
    (exported,) = json.loads(body)["conversations"]
    assert len(exported["items"]) == 2_007
