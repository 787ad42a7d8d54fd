"""ChatKit's rows go with their conversation, and never stop the session's own
operations: the mirror of a message is a number, not a foreign key."""

from __future__ import annotations

import pytest

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import (
    AgentSession,
    ChatKitAttachment,
    ChatKitItem,
    ChatKitThread,
    SessionItem,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def conversation(django_user_model):
    owner = django_user_model.objects.create_user("alice")
    conversation = AgentSession.objects.create(session_id="thr_1", owner=owner)
    item = SessionItem.objects.create(session=conversation, payload='{"role": "user"}')
    ChatKitThread.objects.create(session=conversation, payload="{}")
    ChatKitItem.objects.create(
        session=conversation,
        item_id="msg_1",
        kind="user_message",
        payload="{}",
        session_item_id=item.pk,
    )
    ChatKitAttachment.objects.create(
        attachment_id="atc_1", owner=owner, session=conversation, payload="{}"
    )
    return conversation


async def test_the_session_can_clear_items_that_chatkit_mirrors(conversation):
    await DjangoSession("thr_1").clear_session()
    assert not await SessionItem.objects.aexists()
    assert await ChatKitItem.objects.acount() == 1


def test_the_rows_go_with_their_conversation(conversation):
    conversation.delete()
    assert not ChatKitThread.objects.exists()
    assert not ChatKitItem.objects.exists()
    assert not ChatKitAttachment.objects.exists()
    assert str(ChatKitItem(kind="widget", item_id="wid_1")) == "widget wid_1"
