"""``AgentChatKitServer``: ChatKit's own server, on ``DjangoChatKitStore``, answering
with the real SDK ``Runner`` on a scripted model through ChatKit's agents helpers. A
thread is created, its messages stored and reloaded with ChatKit's types, and the same
messages are the conversation's SDK items; another user finds nothing; feedback is the
app's ``Feedback``."""

from __future__ import annotations

import pytest
from agents import Agent
from chatkit.server import NonStreamingResult
from chatkit.store import NotFoundError
from chatkit.types import (
    AssistantMessageItem,
    ItemFeedbackParams,
    ItemsFeedbackReq,
    Thread,
    ThreadGetByIdParams,
    ThreadRetryAfterItemParams,
    ThreadsGetByIdReq,
    ThreadsRetryAfterItemReq,
    UserMessageItem,
)

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import Feedback
from django_agent_sessions.protocols.chatkit import ChatKitContext
from django_agent_sessions.protocols.chatkit.server import AgentChatKitServer
from tests.protocols.chatkit.helpers import add_message, create, of_type, streamed
from tests.scripted import ScriptedModel, streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)

REPLY = "Sunny in Paris, twenty-one degrees."


def get_thread(thread_id: str) -> bytes:
    request = ThreadsGetByIdReq(params=ThreadGetByIdParams(thread_id=thread_id))
    return request.model_dump_json().encode()


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel([streamed_reply(REPLY), streamed_reply("Still sunny.")])


@pytest.fixture
def server(model: ScriptedModel) -> AgentChatKitServer:
    return AgentChatKitServer(agent=Agent(name="Assistant", model=model))


@pytest.fixture
def alice(make_user) -> ChatKitContext:
    return ChatKitContext(user=make_user("alice"))


@pytest.fixture
def bob(make_user) -> ChatKitContext:
    return ChatKitContext(user=make_user("bob"))


async def _first_turn(server: AgentChatKitServer, context: ChatKitContext) -> str:
    events = await streamed(await server.process(create("Weather in Paris?"), context))
    return str(of_type(events, "thread.created")[0].thread.id)


async def test_a_thread_is_created_answered_stored_and_reloaded(server, alice):
    events = await streamed(await server.process(create("Weather in Paris?"), alice))
    thread_id = of_type(events, "thread.created")[0].thread.id
    done = [event.item for event in of_type(events, "thread.item.done")]
    assert [type(item) for item in done] == [UserMessageItem, AssistantMessageItem]
    deltas = of_type(events, "thread.item.updated")
    streamed_text = "".join(e.update.delta for e in deltas if e.update.type.endswith("delta"))
    assert streamed_text == REPLY == done[1].content[0].text

    loaded = await server.process(get_thread(thread_id), alice)
    assert isinstance(loaded, NonStreamingResult)
    thread = Thread.model_validate_json(loaded.json)
    assert [item.id for item in thread.items.data] == [item.id for item in done]
    assert thread.items.data[1].content[0].text == REPLY


async def test_the_conversation_holds_the_same_messages_as_sdk_items(server, alice):
    thread_id = await _first_turn(server, alice)
    await streamed(await server.process(add_message(thread_id, "And tomorrow?"), alice))

    items = await DjangoSession(thread_id, owner=alice.user).get_items()
    assert [(item["role"], _text(item)) for item in items] == [
        ("user", "Weather in Paris?"),
        ("assistant", REPLY),
        ("user", "And tomorrow?"),
        ("assistant", "Still sunny."),
    ]


async def test_the_second_turn_sees_the_first_through_the_store(server, model, alice):
    thread_id = await _first_turn(server, alice)
    await streamed(await server.process(add_message(thread_id, "And tomorrow?"), alice))
    seen = [_text(item) for item in model.last_call.input]
    assert seen == ["Weather in Paris?", REPLY, "And tomorrow?"]


async def test_a_retry_replaces_the_reply_in_the_conversation_too(server, alice):
    events = await streamed(await server.process(create("Weather in Paris?"), alice))
    thread_id = of_type(events, "thread.created")[0].thread.id
    question = of_type(events, "thread.item.done")[0].item
    params = ThreadRetryAfterItemParams(thread_id=thread_id, item_id=question.id)
    retry = ThreadsRetryAfterItemReq(params=params).model_dump_json().encode()
    await streamed(await server.process(retry, alice))

    items = await DjangoSession(thread_id).get_items()
    assert [_text(item) for item in items] == ["Weather in Paris?", "Still sunny."]


async def test_another_user_cannot_load_or_extend_the_thread(server, alice, bob):
    thread_id = await _first_turn(server, alice)
    with pytest.raises(NotFoundError):
        await server.process(get_thread(thread_id), bob)
    with pytest.raises(NotFoundError):
        await streamed(await server.process(add_message(thread_id, "Mine now"), bob))
    assert len(await DjangoSession(thread_id).get_items()) == 2


async def test_feedback_on_a_reply_is_the_apps_feedback(server, alice):
    events = await streamed(await server.process(create("Weather in Paris?"), alice))
    thread_id = of_type(events, "thread.created")[0].thread.id
    reply = of_type(events, "thread.item.done")[1].item
    params = ItemFeedbackParams(thread_id=thread_id, item_ids=[reply.id], kind="negative")
    await server.process(ItemsFeedbackReq(params=params).model_dump_json().encode(), alice)

    rating = await Feedback.objects.select_related("session").aget()
    assert (rating.session.session_id, rating.user_id, rating.rating) == (
        thread_id,
        alice.user.pk,
        -1,
    )
    assert REPLY in rating.reply


def _text(item) -> str:
    content = item["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)
