"""A stream opened on an id with no conversation yet: it follows the conversation's first
run once its owner creates it, and hears nothing of one someone else creates."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions.store import conversations
from tests import chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.sse.client import EventStream, post
from tests.sse.views_helpers import agent_settings, opened, url  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_stream_waiting_on_a_new_id_follows_its_first_run(alice_cookie, session_id):
    chat_agent.script(streamed_reply("first"))
    stream, history = await opened(session_id, alice_cookie)  # nothing stored yet
    assert (history["items"], await run_statuses(session_id)) == ([], [])
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, alice_cookie))[0] == 202
    frames = await stream.frames_until("run.completed")
    # From the run's start, as the tab that sent the message: no catch-up.
    assert [frame["type"] for frame in frames if frame["type"] != "text.delta"] == [
        "run.started",
        "item.completed",
        "item.completed",
        "run.completed",
    ]
    assert "".join(frame["delta"] for frame in frames if frame["type"] == "text.delta") == "first"


def created_right_after_the_lookup(monkeypatch: Any, owner: Any) -> None:
    """``owner`` creates the conversation right after the stream's lookup found none
    (the POST's lookup, later, finds it), announcing it to nobody."""
    lookup = conversations.find_conversation
    lookups: list[Any] = []

    def created_after(session_id: str, *, owner_id: Any) -> Any:
        found = lookup(session_id, owner_id=owner_id)
        if not lookups:
            conversations.open_conversation(session_id, owner_id=owner.pk)
        lookups.append(found)
        return found

    monkeypatch.setattr(conversations, "find_conversation", created_after)


async def test_a_conversation_created_before_the_stream_waited_is_joined(
    alice, alice_cookie, session_id, monkeypatch
):
    """Created (by another tab's first message) after the stream found no conversation
    and before it waited in the new id's group: nobody announces it to the stream,
    which looks again once waiting."""
    chat_agent.script(streamed_reply("late but there"))
    created_right_after_the_lookup(monkeypatch, alice)
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "hi"}, alice_cookie))[0] == 202
    frames = await stream.frames_until("run.completed")
    assert "".join(f["delta"] for f in frames if f["type"] == "text.delta") == "late but there"


async def test_a_stream_on_an_id_someone_else_created_meanwhile_ends(
    alice_cookie, session_id, make_user, monkeypatch
):
    created_right_after_the_lookup(monkeypatch, await sync_to_async(make_user)("bob"))
    stream = EventStream(url(session_id, "events/"), alice_cookie)
    assert await stream.status() == 200
    assert await stream.next() is None  # ended without a frame; its reconnect gets 403
    assert await EventStream(url(session_id, "events/"), alice_cookie).status() == 403


async def test_another_users_stream_on_a_new_id_never_hears_of_its_conversation(
    alice_cookie, bob_cookie, session_id
):
    chat_agent.script(streamed_reply("for Alice only"))
    bobs, _history = await opened(session_id, bob_cookie)
    alices, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "a secret"}, alice_cookie))[0] == 202
    await alices.frames_until("run.completed")
    with pytest.raises(asyncio.TimeoutError):
        await bobs.next(timeout=0.5)  # (heartbeats come every 15 s)
