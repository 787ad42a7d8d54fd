"""How an AgentSessionConsumer gets its agent: from the settings or from a subclass, with a
missing or broken agent reported to the socket."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions.models import AgentRun, SessionItem
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.websocket.consumer_helpers import agent_settings  # noqa: F401
from tests.websockets import Socket, login_cookie, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_a_missing_agent_is_reported_and_nothing_is_stored(
    settings, alice_cookie, session_id, caplog
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "AGENT": "tests.chat_agent.nothing"}
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Hello?")
    assert (await socket.receive())["code"] == "unavailable"
    assert await SessionItem.objects.acount() == 0
    assert await AgentRun.objects.acount() == 0
    assert "tests.chat_agent" in caplog.text
    await socket.close()


async def test_a_subclass_may_choose_the_agent(alice, session_id):
    from agents import Agent
    from channels.auth import AuthMiddlewareStack
    from channels.routing import URLRouter
    from channels.security.websocket import AllowedHostsOriginValidator
    from channels.testing import WebsocketCommunicator
    from django.urls import path

    from django_agent_sessions.consumers import AgentSessionConsumer
    from tests.scripted import ScriptedModel

    class PirateConsumer(AgentSessionConsumer):
        async def get_agent(self):
            return Agent(name="Pirate", model=ScriptedModel([streamed_reply("Arr.")]))

    app = AllowedHostsOriginValidator(
        AuthMiddlewareStack(URLRouter([path("ws/<str:session_id>/", PirateConsumer.as_asgi())]))
    )
    cookie = await sync_to_async(login_cookie)(alice)
    communicator = WebsocketCommunicator(
        app, f"/ws/{session_id}/", headers=[(b"origin", b"http://testserver"), (b"cookie", cookie)]
    )
    assert (await communicator.connect())[0]
    assert (await communicator.receive_json_from())["type"] == "history"
    await communicator.send_json_to({"type": "user_message", "text": "Ahoy"})
    frames = []
    while not frames or frames[-1]["type"] != "run.completed":
        frames.append(await communicator.receive_json_from(timeout=5))
    assert frames[0]["agent"] == "Pirate"
    assert text_of(frames) == "Arr."
    await communicator.disconnect()


async def test_a_broken_agent_factory_is_reported_and_the_socket_stays_usable(
    settings, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "AGENT": "tests.chat_agent.broken"}
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Hello?")
    error = await socket.receive()
    assert error["code"] == "unavailable"
    assert "secret" not in error["message"]
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "AGENT": "tests.chat_agent.make_agent"}
    chat_agent.script(streamed_reply("Working again."))
    await socket.say("Hello?")
    assert text_of(await socket.until("run.completed")) == "Working again."
    await socket.close()
