"""``following.temporary`` through both transports: a temporary chat's tabs count
themselves in and out, and the chat is removed once the last one has been gone for the
grace; a reload within the grace, or a second tab, keeps it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions.models import AgentSession
from django_agent_sessions.streaming.following import temporary
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.sse.client import EventStream, post
from tests.sse.views_helpers import opened, url
from tests.temporary_helpers import left_behind
from tests.websocket.conftest import alice, alice_cookie, use_agent  # noqa: F401
from tests.websockets import Socket, close_all_sockets

pytestmark = pytest.mark.django_db(transaction=True)

GRACE = 0.3


@pytest.fixture(autouse=True)
async def temporary_settings(use_agent):  # noqa: F811
    use_agent("tests.chat_agent.make_agent", TEMPORARY_GRACE_SECONDS=GRACE)
    yield
    await close_all_sockets()
    for stream in list(EventStream.opened):
        await stream.close()
    await temporary.settled()


async def stored(session_id: str) -> dict[str, Any] | None:
    row = AgentSession.objects.filter(session_id=session_id).values("pk", "temporary")
    found: dict[str, Any] | None = await row.afirst()
    return found


async def socket_chat(session_id: str, cookie: bytes, **frame: Any) -> Socket:
    """A tab whose first message started a chat (a temporary one, with ``frame``), its
    reply done."""
    chat_agent.script(streamed_reply("noted"))
    socket = Socket(session_id, cookie)
    await socket.open()
    await socket.send({"type": "user_message", "text": "hi", **frame})
    await socket.until("run.completed")
    return socket


async def test_the_last_socket_leaving_removes_the_chat_after_the_grace(alice_cookie, session_id):  # noqa: F811
    socket = await socket_chat(session_id, alice_cookie, temporary=True)
    row = await stored(session_id)
    assert row is not None
    assert row["temporary"] is True
    await socket.close()
    await asyncio.sleep(GRACE / 3)
    assert await stored(session_id) is not None  # within the grace
    await temporary.settled()
    assert await stored(session_id) is None
    assert await sync_to_async(left_behind)(row["pk"]) == {}


async def test_a_reload_within_the_grace_keeps_the_chat(alice_cookie, session_id):  # noqa: F811
    first = await socket_chat(session_id, alice_cookie, temporary=True)
    await first.close()
    reloaded = Socket(session_id, alice_cookie)
    history = await reloaded.open()
    assert [item["kind"] for item in history["items"]] == ["message", "message"]
    await temporary.settled()
    assert await stored(session_id) is not None
    await reloaded.close()
    await temporary.settled()
    assert await stored(session_id) is None


async def test_a_second_tab_keeps_the_chat_until_it_leaves_too(alice_cookie, session_id):  # noqa: F811
    first = await socket_chat(session_id, alice_cookie, temporary=True)
    second = Socket(session_id, alice_cookie)
    await second.open()
    await first.close()
    await temporary.settled()
    assert await stored(session_id) is not None
    await second.close()
    await temporary.settled()
    assert await stored(session_id) is None


async def test_a_chat_that_is_not_temporary_stays(alice_cookie, session_id):  # noqa: F811
    socket = await socket_chat(session_id, alice_cookie)
    await socket.close()
    await asyncio.sleep(GRACE * 2)
    await temporary.settled()
    assert (await stored(session_id) or {}).get("temporary") is False


async def test_forced_temporary_chats_go_too(alice_cookie, session_id, settings):  # noqa: F811
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "FORCE_TEMPORARY": True}
    socket = await socket_chat(session_id, alice_cookie)  # the page did not ask
    assert (await stored(session_id) or {}).get("temporary") is True
    await socket.close()
    await temporary.settled()
    assert await stored(session_id) is None


async def test_an_event_stream_ending_removes_the_chat(alice_cookie, session_id):  # noqa: F811
    chat_agent.script(streamed_reply("noted"))
    stream, _history = await opened(session_id, alice_cookie)
    body = {"text": "hi", "temporary": True}
    assert (await post(url(session_id, "messages/"), body, alice_cookie))[0] == 202
    await stream.frames_until("run.completed")
    pk = (await stored(session_id) or {})["pk"]
    await stream.close()
    await temporary.settled()
    assert await stored(session_id) is None
    assert await sync_to_async(left_behind)(pk) == {}


async def test_a_stream_that_reconnects_within_the_grace_keeps_the_chat(alice_cookie, session_id):  # noqa: F811
    chat_agent.script(streamed_reply("noted"))
    stream, _history = await opened(session_id, alice_cookie)
    body = {"text": "hi", "temporary": True}
    assert (await post(url(session_id, "messages/"), body, alice_cookie))[0] == 202
    await stream.frames_until("run.completed")
    await stream.close()
    again, history = await opened(session_id, alice_cookie)
    assert len(history["items"]) == 2
    await temporary.settled()
    assert await stored(session_id) is not None
    await again.close()
    await temporary.settled()
    assert await stored(session_id) is None


async def test_temporary_must_be_a_bool(alice_cookie, session_id):  # noqa: F811
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.send({"type": "user_message", "text": "hi", "temporary": "yes"})
    error = await socket.receive()
    assert (error["type"], error["code"]) == ("error", "invalid_frame")
    assert await stored(session_id) is None
