"""Errors an AgentSessionConsumer socket reports: a failing model, bad frames and the rate
limit, after which the socket stays usable."""

from __future__ import annotations

import pytest

from django_agent_sessions.models import AgentRun, SessionItem
from tests import chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.websocket.consumer_helpers import (
    agent_settings,  # noqa: F401
)
from tests.websockets import Socket, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_a_model_error_fails_the_run_and_the_socket_stays_usable(alice_cookie, session_id):
    chat_agent.script(RuntimeError("database password is hunter2"), streamed_reply("Back."))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Hello")
    failed = (await socket.until("run.failed"))[-1]
    assert failed["error"]["code"] == "agent_error"
    assert "hunter2" not in str(failed)
    await socket.say("Hello again")
    assert text_of(await socket.until("run.completed")) == "Back."
    assert await run_statuses(session_id) == ["failed", "completed"]
    record = await AgentRun.objects.filter(status="failed").aget()
    assert "hunter2" in record.error  # kept for the developers, not shown to the user
    await socket.close()


BAD_FRAMES = [
    ("not json", "invalid_json"),
    ("[" * 20000 + "]" * 20000, "invalid_json"),
    ('"just a string"', "invalid_frame"),
    ('{"text": "no type"}', "invalid_frame"),
    ('{"type": "shout", "text": "hi"}', "unknown_type"),
    ('{"type": "user_message"}', "empty_text"),
    ('{"type": "user_message", "text": ""}', "empty_text"),
    ('{"type": "user_message", "text": "   \\n "}', "empty_text"),
    ('{"type": "user_message", "text": 42}', "empty_text"),
    ('{"type": "user_message", "text": "' + "x" * 70000 + '"}', "too_large"),
]


@pytest.mark.parametrize(("frame", "code"), BAD_FRAMES, ids=[c for _, c in BAD_FRAMES])
async def test_a_bad_frame_gets_an_error_and_changes_nothing(alice_cookie, session_id, frame, code):
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.communicator.send_to(text_data=frame)
    error = await socket.receive()
    assert error["type"] == "error"
    assert error["code"] == code
    assert error["message"]
    assert await SessionItem.objects.acount() == 0
    assert await AgentRun.objects.acount() == 0
    # Still open and usable.
    chat_agent.script(streamed_reply("Still here."))
    await socket.say("Hi")
    assert text_of(await socket.until("run.completed")) == "Still here."
    await socket.close()


async def test_a_binary_frame_gets_an_error(alice_cookie, session_id):
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.communicator.send_to(bytes_data=b"\x00\x01")
    assert (await socket.receive())["code"] == "invalid_frame"
    await socket.close()


async def test_the_rate_limit_counts_runs_per_user(settings, alice_cookie, session_id):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RATE_LIMIT": "2/h"}
    chat_agent.script(streamed_reply("1"), streamed_reply("2"), streamed_reply("3"))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    for _ in range(2):
        await socket.say("again")
        await socket.until("run.completed")
    await socket.say("again")
    assert (await socket.until("error"))[-1]["code"] == "rate_limited"
    await socket.close()
