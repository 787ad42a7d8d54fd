"""A ChatKit answer stopped mid-reply (the client went away) keeps what was said, in the
thread and in the conversation: ChatKit's server stores the partial reply through the
store as the stream is cancelled, and the store's writes finish despite it."""

from __future__ import annotations

import asyncio

import pytest
from agents import Agent
from chatkit.types import AssistantMessageItem, SDKHiddenContextItem, UserMessageItem

from django_agent_sessions import DjangoSession
from django_agent_sessions.protocols.chatkit import ChatKitContext, DjangoChatKitStore
from django_agent_sessions.protocols.chatkit.server import AgentChatKitServer
from tests.protocols.chatkit.helpers import EVENT, create
from tests.scripted import ScriptedModel, streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_cancelled_answer_keeps_the_partial_reply_on_both_sides(alice):
    gate = asyncio.Event()  # never set: the model stops after its first token
    model = ScriptedModel([streamed_reply("Sunny all week.", gate=gate)])
    server = AgentChatKitServer(agent=Agent(name="Assistant", model=model))
    context = ChatKitContext(user=alice)
    chunks = (await server.process(create("Weather?"), context)).__aiter__()
    thread_id, first_delta = None, asyncio.Event()

    async def read() -> None:
        nonlocal thread_id
        async for chunk in chunks:
            event = EVENT.validate_json(chunk[len(b"data: ") :])
            thread_id = event.thread.id if event.type == "thread.created" else thread_id
            if event.type == "thread.item.updated" and event.update.type.endswith("delta"):
                first_delta.set()

    reading = asyncio.create_task(read())
    await asyncio.wait_for(first_delta.wait(), 10)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading

    items = (await DjangoChatKitStore().load_thread_items(thread_id, None, 10, "asc", context)).data
    assert [type(item) for item in items] == [
        UserMessageItem,
        AssistantMessageItem,
        SDKHiddenContextItem,
    ]
    assert items[1].content[0].text == "Sun"
    stored = await DjangoSession(thread_id).get_items()
    assert [(item["role"], item["content"][0]["text"]) for item in stored] == [
        ("user", "Weather?"),
        ("assistant", "Sun"),
    ]
