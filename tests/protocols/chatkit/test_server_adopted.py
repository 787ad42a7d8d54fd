"""A conversation of the packaged chat opens in ChatKit with its messages, and goes on
there: the agent's input has the whole conversation, and both sides read one history."""

from __future__ import annotations

import pytest
from agents import Agent
from chatkit.types import (
    AssistantMessageItem,
    Page,
    Thread,
    ThreadGetByIdParams,
    ThreadListParams,
    ThreadsGetByIdReq,
    ThreadsListReq,
    UserMessageItem,
)

from django_agent_sessions import DjangoSession
from django_agent_sessions.protocols.chatkit import ChatKitContext
from django_agent_sessions.protocols.chatkit.server import AgentChatKitServer
from tests.conftest import assistant_message, user_message
from tests.protocols.chatkit.helpers import add_message, streamed
from tests.scripted import ScriptedModel, streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)


async def _thread(server, context) -> Thread:
    asked = ThreadsGetByIdReq(params=ThreadGetByIdParams(thread_id="conv-1"))
    return Thread.model_validate_json((await server.process(asked.model_dump_json(), context)).json)


async def test_a_chat_conversation_opens_and_goes_on_in_chatkit(alice):
    await DjangoSession("conv-1", owner=alice).add_items(
        [user_message("Weather in Paris?"), assistant_message("Sunny.")]
    )
    model = ScriptedModel([streamed_reply("Rain tomorrow.")])
    server, context = AgentChatKitServer(agent=Agent(name="A", model=model)), ChatKitContext(alice)

    listed = await server.process(
        ThreadsListReq(params=ThreadListParams()).model_dump_json(), context
    )
    assert [thread.id for thread in Page[Thread].model_validate_json(listed.json).data] == [
        "conv-1"
    ]
    shown = (await _thread(server, context)).items.data
    assert [type(item) for item in shown] == [UserMessageItem, AssistantMessageItem]
    assert [shown[0].content[0].text, shown[1].content[0].text] == ["Weather in Paris?", "Sunny."]

    await streamed(await server.process(add_message("conv-1", "And tomorrow?"), context))
    said = ["".join(part["text"] for part in item["content"]) for item in model.last_call.input]
    assert said == ["Weather in Paris?", "Sunny.", "And tomorrow?"]
    texts = [item.content[0].text for item in (await _thread(server, context)).items.data]
    assert texts == ["Weather in Paris?", "Sunny.", "And tomorrow?", "Rain tomorrow."]
    stored = await DjangoSession("conv-1").get_items()
    assert len(stored) == 4
    assert stored[:2] == [user_message("Weather in Paris?"), assistant_message("Sunny.")]
