"""A ChatKit message's SDK form is what ChatKit's own converter gives the model; other
items have none."""

from __future__ import annotations

from datetime import datetime

import pytest
from chatkit.agents import simple_to_agent_input
from chatkit.types import (
    AssistantMessageContent,
    AssistantMessageItem,
    EndOfTurnItem,
    HiddenContextItem,
    InferenceOptions,
    UserMessageItem,
    UserMessageTagContent,
    UserMessageTextContent,
)

from django_agent_sessions.protocols.chatkit.mirror import chatkit_item, sdk_item

NOW = datetime(2026, 1, 1)


def _user(*content) -> UserMessageItem:
    return UserMessageItem(
        id="msg_1",
        thread_id="thr_1",
        created_at=NOW,
        content=list(content),
        inference_options=InferenceOptions(),
    )


def _set(message) -> dict:
    """A message without the parts' unset fields (the converter's ``logprobs: None``)."""
    parts = [{k: v for k, v in part.items() if v is not None} for part in message["content"]]
    return {**message, "content": parts}


async def test_a_user_message_is_the_converters_user_message():
    item = _user(UserMessageTextContent(text="Weather "), UserMessageTextContent(text="now?"))
    converted = (await simple_to_agent_input([item]))[0]
    assert sdk_item(item) == _set(converted)


def test_a_tag_is_its_text_as_the_user_typed_it():
    item = _user(
        UserMessageTextContent(text="Ask "),
        UserMessageTagContent(id="t1", text="Paris", data={}),
    )
    assert sdk_item(item)["content"] == [{"type": "input_text", "text": "Ask @Paris"}]


async def test_an_assistant_message_is_the_converters_assistant_message():
    item = AssistantMessageItem(
        id="msg_2",
        thread_id="thr_1",
        created_at=NOW,
        content=[AssistantMessageContent(text="Sunny"), AssistantMessageContent(text=".")],
    )
    converted = (await simple_to_agent_input([item]))[0]
    assert sdk_item(item) == _set(converted)


@pytest.mark.parametrize(
    "item",
    [
        EndOfTurnItem(id="eot_1", thread_id="thr_1", created_at=NOW),
        HiddenContextItem(id="hc_1", thread_id="thr_1", created_at=NOW, content="secret"),
    ],
)
def test_other_items_have_no_sdk_form(item):
    assert sdk_item(item) is None


def test_an_sdk_message_is_a_chatkit_message_of_its_text():
    asked = chatkit_item("sdk_1", "thr_1", NOW, {"role": "user", "content": "Weather?"})
    assert isinstance(asked, UserMessageItem)
    assert asked.content == [UserMessageTextContent(text="Weather?")]
    reply = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Sunny", "annotations": []}],
    }
    answered = chatkit_item("sdk_2", "thr_1", NOW, reply)
    assert isinstance(answered, AssistantMessageItem)
    assert answered.content == [AssistantMessageContent(text="Sunny")]
    assert sdk_item(answered) == reply  # and back


def test_other_sdk_items_are_not_chatkit_messages():
    call = {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"}
    assert chatkit_item("sdk_3", "thr_1", NOW, call) is None
