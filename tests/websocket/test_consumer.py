"""AgentSessionConsumer over the real middleware stack, with the real Runner: a conversation
streams, is stored, and is seen by every socket open on it, and only by its owner's."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import conversations
from django_agent_sessions.streaming.delivery import groups
from tests import chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply, tool_turn
from tests.websocket.consumer_helpers import (
    ANSWER,
    agent_settings,  # noqa: F401
)
from tests.websockets import Socket, of_type, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_a_conversation_streams_and_is_there_after_reconnecting(alice_cookie, session_id):
    chat_agent.script(streamed_reply(ANSWER))
    socket = Socket(session_id, alice_cookie)
    assert await socket.open() == {
        "type": "history",
        "protocol": 2,
        "items": [],
        "has_more": False,
        "oldest_id": None,
        "last_item_id": None,
        "active_run": None,
        "pending_approvals": [],
        "queued": [],
    }

    await socket.say("Weather in Paris?")
    frames = await socket.until("run.completed")

    assert [f["type"] for f in frames[:2]] == ["run.started", "item.completed"]
    assert frames[1]["item"] == {"kind": "message", "role": "user", "text": "Weather in Paris?"}
    assert [f["seq"] for f in frames] == list(range(1, len(frames) + 1))
    assert len({f["run_id"] for f in frames}) == 1
    assert text_of(frames) == ANSWER
    assert of_type(frames, "item.completed")[-1]["item"]["text"] == ANSWER
    done = frames[-1]
    assert done["final_output"] == ANSWER
    assert done["usage"]["total_tokens"] == 18
    assert await socket.nothing_more()  # each event once, the end of the run included
    await socket.close()

    again = Socket(session_id, alice_cookie)
    history = await again.open()
    assert history["active_run"] is None
    run_id = frames[0]["run_id"]
    shown = [{**item, "created_at": None} for item in history["items"]]
    first_id = history["items"][0]["id"]
    assert shown == [
        {
            "kind": "message",
            "role": "user",
            "text": "Weather in Paris?",
            "id": first_id,
            "created_at": None,
            "run_id": run_id,
        },
        {
            "kind": "message",
            "role": "assistant",
            "text": ANSWER,
            "html": f"<p>{ANSWER}</p>\n",
            "id": first_id + 1,
            "created_at": None,
            "run_id": run_id,
        },
    ]
    assert history["last_item_id"] == first_id + 1
    assert done["reply_item_id"] == first_id + 1  # the page can rate the reply it streamed
    await again.close()
    assert await run_statuses(session_id) == ["completed"]


async def test_tool_calls_and_outputs_are_items_and_tools_see_the_user(
    alice, alice_cookie, session_id
):
    chat_agent.script(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-9"), streamed_reply(ANSWER)
    )
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Weather?")
    frames = await socket.until("run.completed")
    items = [f["item"] for f in of_type(frames, "item.completed")]
    assert [item["kind"] for item in items] == ["message", "tool_call", "tool_output", "message"], (
        frames
    )
    assert items[1]["name"] == "get_weather"
    assert items[1]["arguments"] == '{"city":"Paris"}'
    assert items[2] == {"kind": "tool_output", "call_id": "call-9", "output": "sunny in Paris"}
    assert [user.pk for user in chat_agent.tool_users] == [alice.pk]
    await socket.close()


async def test_two_sockets_on_one_conversation_both_see_the_run(alice_cookie, session_id):
    chat_agent.script(streamed_reply(ANSWER))
    first, second = Socket(session_id, alice_cookie), Socket(session_id, alice_cookie)
    await first.open()
    await second.open()  # both open on a new id: nothing is stored yet
    assert not await AgentSession.objects.filter(session_id=session_id).aexists()
    await first.say("Weather?")
    seen_first = await first.until("run.completed")
    seen_second = await second.until("run.completed")
    assert text_of(seen_first) == ANSWER
    # The second tab joins when the first message creates the conversation; told by
    # its own process before the run could publish, it sees the run from its start.
    assert seen_second == seen_first
    assert seen_second[-1] == seen_first[-1]
    await first.close()
    await second.close()


async def test_connecting_writes_nothing_and_the_first_message_creates(
    alice, alice_cookie, session_id
):
    chat_agent.script(streamed_reply(ANSWER))
    for _ in range(3):
        socket = Socket(session_id, alice_cookie)
        history = await socket.open()
        assert history == {
            "type": "history",
            "protocol": 2,
            "items": [],
            "has_more": False,
            "oldest_id": None,
            "last_item_id": None,
            "active_run": None,
            "pending_approvals": [],
            "queued": [],
        }
        await socket.send({"type": "cancel"})  # nothing to cancel, nothing written
        await socket.send({"type": "load_older", "before": 10})
        page = await socket.receive()
        assert (page["type"], page["items"], page["has_more"]) == ("history.page", [], False)
        await socket.send({"type": "approval", "call_id": "call-1", "approve": True})
        assert (await socket.receive())["code"] == "unknown_approval"
        assert await socket.nothing_more()
        await socket.close()
    assert not await AgentSession.objects.filter(session_id=session_id).aexists()
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Weather?")
    await socket.until("run.completed")
    conversation = await AgentSession.objects.aget(session_id=session_id)
    assert conversation.owner_id == alice.pk
    assert conversation.title == "Weather?"
    await socket.close()


async def test_a_socket_connecting_mid_run_catches_up(alice_cookie, session_id):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("Earlier answer."), streamed_reply(ANSWER, gate=gate))
    first = Socket(session_id, alice_cookie)
    await first.open()
    await first.say("First question")
    await first.until("run.completed")
    await first.say("Second question")
    before = await first.until("text.delta")

    late = Socket(session_id, alice_cookie)
    history = await late.open()
    gate.set()
    after = await late.until("run.completed")
    await first.until("run.completed")

    assert [item["text"] for item in history["items"]] == ["First question", "Earlier answer."]
    active = history["active_run"]
    assert active["run_id"] == before[0]["run_id"]
    assert active["items"] == [{"kind": "message", "role": "user", "text": "Second question"}]
    assert active["text"] == text_of(before)
    assert active["seq"] == before[-1]["seq"]
    assert after[0]["seq"] == active["seq"] + 1  # nothing missed, nothing twice
    assert active["text"] + text_of(after) == ANSWER
    await first.close()
    await late.close()


async def test_run_events_reach_the_socket_while_the_database_thread_is_busy(
    alice, alice_cookie, session_id
):
    # Relaying an event must not wait for Django's sync thread (channels' dispatch hops
    # there before every message): a run streams faster than such a hop, and the
    # channel layer drops what a socket does not take in time.
    await DjangoSession(session_id, owner=alice).add_items([{"role": "user", "content": "hi"}])
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    pk = (
        await AgentSession.objects.filter(session_id=session_id).values_list("pk", flat=True).aget()
    )
    busy = asyncio.ensure_future(sync_to_async(time.sleep, thread_sensitive=True)(1.5))
    await asyncio.sleep(0.05)
    event = {"type": "text.delta", "run_id": "r", "seq": 1, "delta": "hello"}
    layer = get_channel_layer()
    await layer.group_send(groups.group_name(pk), {"type": "agent.event", "event": event})
    try:
        assert await socket.receive(timeout=0.5) == event
    finally:
        await busy


async def test_another_users_socket_on_a_new_id_never_hears_of_its_conversation(
    alice_cookie, bob_cookie, session_id
):
    """The pending group of a new id is its owner's: Bob's socket, open on the id Alice
    then creates, is not brought into her conversation."""
    chat_agent.script(streamed_reply("for Alice only"))
    bobs = Socket(session_id, bob_cookie)
    await bobs.open()
    alices = Socket(session_id, alice_cookie)
    await alices.open()
    await alices.say("a secret")
    await alices.until("run.completed")
    assert await bobs.nothing_more(wait=0.5)


def created_right_after_the_lookup(monkeypatch, owner) -> None:
    """The conversation is created (as by another tab's first message, whose
    announcement the socket is not yet waiting for) right after the socket's lookup."""
    real = conversations.afind_conversation
    lookups = 0

    async def lookup(session_id: str, *, owner_id: Any) -> Any:
        nonlocal lookups
        lookups += 1
        found = await real(session_id, owner_id=owner_id)
        if lookups == 1:
            await conversations.aopen_conversation(session_id, owner_id=owner.pk)
        return found

    monkeypatch.setattr(conversations, "afind_conversation", lookup)


async def test_a_conversation_created_between_lookup_and_waiting_is_joined(
    alice, alice_cookie, session_id, monkeypatch
):
    chat_agent.script(streamed_reply(ANSWER))
    created_right_after_the_lookup(monkeypatch, alice)
    late = Socket(session_id, alice_cookie)
    await late.open()  # found nothing, then found it once waiting: joined
    sender = Socket(session_id, alice_cookie)
    await sender.open()
    await sender.say("Weather?")
    assert text_of(await late.until("run.completed")) == ANSWER


async def test_someone_elses_conversation_created_meanwhile_closes_the_socket(
    make_user, alice_cookie, session_id, monkeypatch
):
    created_right_after_the_lookup(monkeypatch, await sync_to_async(make_user)("bob"))
    socket = Socket(session_id, alice_cookie)
    connected, _ = await socket.connect()
    assert connected
    assert await socket.closed_with() == 4403
