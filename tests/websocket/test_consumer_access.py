"""Who may open an AgentSessionConsumer socket on which conversation: signed-in owners,
anonymous visitors when allowed, and only from an allowed origin."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions.consumers import anonymous_owner
from django_agent_sessions.models import AgentSession
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.websocket.consumer_helpers import agent_settings  # noqa: F401
from tests.websockets import Socket, anonymous_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_anonymous_sockets_are_closed_with_4401(session_id):
    socket = Socket(session_id, cookie=None)
    connected, _ = await socket.connect()
    assert connected
    assert await socket.closed_with() == 4401
    assert await AgentSession.objects.acount() == 0


async def test_another_users_conversation_is_closed_with_4403(alice_cookie, bob_cookie, session_id):
    chat_agent.script(streamed_reply("For Alice only."))
    alices = Socket(session_id, alice_cookie)
    await alices.open()
    await alices.say("secret")
    await alices.until("run.completed")
    await alices.close()

    bobs = Socket(session_id, bob_cookie)
    await bobs.connect()
    assert await bobs.closed_with() == 4403
    assert await bobs.nothing_more()


async def test_an_unusable_session_id_is_closed_with_4403(alice_cookie):
    socket = Socket("x" * 300, alice_cookie)
    await socket.connect()
    assert await socket.closed_with() == 4403


@pytest.mark.parametrize("origin", [b"http://evil.example", None])
async def test_a_foreign_or_missing_origin_is_refused(alice_cookie, session_id, origin):
    socket = Socket(session_id, alice_cookie, origin=origin)
    connected, _ = await socket.connect()
    assert not connected
    assert await AgentSession.objects.acount() == 0


async def test_anonymous_mode_binds_conversations_to_the_django_session(settings, session_id):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "ALLOW_ANONYMOUS": True}
    chat_agent.script(streamed_reply("Hello visitor."))
    visitor_cookie = await sync_to_async(anonymous_cookie)()
    other_cookie = await sync_to_async(anonymous_cookie)()
    visitor = Socket(session_id, visitor_cookie)
    await visitor.open()
    await visitor.say("Hi")
    await visitor.until("run.completed")
    await visitor.close()

    returning = Socket(session_id, visitor_cookie)
    back = await returning.open()
    await returning.close()
    assert [item["text"] for item in back["items"]] == ["Hi", "Hello visitor."]
    stored = await AgentSession.objects.aget()
    key = visitor_cookie.decode().split("=")[1]
    assert stored.session_id == f"anon:{anonymous_owner(key)}:{session_id}"
    assert key not in stored.session_id  # the session key is a credential
    assert stored.owner_id is None
    # Another visitor using the same id gets a conversation of their own.
    other = Socket(session_id, other_cookie)
    assert (await other.open())["items"] == []
    await other.close()
    # A visitor without a Django session cannot chat.
    nobody = Socket(session_id, cookie=None)
    await nobody.connect()
    assert await nobody.closed_with() == 4403
