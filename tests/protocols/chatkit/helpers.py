"""What the ChatKit tests share: ChatKit's own requests as the client sends them, and
the events of a streamed answer read back with the library's own types."""

from __future__ import annotations

from typing import Any

from chatkit.server import StreamingResult
from chatkit.types import (
    InferenceOptions,
    ThreadAddUserMessageParams,
    ThreadCreateParams,
    ThreadsAddUserMessageReq,
    ThreadsCreateReq,
    ThreadStreamEvent,
    UserMessageInput,
    UserMessageTextContent,
)
from pydantic import TypeAdapter

EVENT: TypeAdapter[ThreadStreamEvent] = TypeAdapter(ThreadStreamEvent)


def said(text: str) -> UserMessageInput:
    return UserMessageInput(
        content=[UserMessageTextContent(text=text)],
        attachments=[],
        inference_options=InferenceOptions(),
    )


def create(text: str) -> bytes:
    """A ``threads.create`` request with a first message, as JSON."""
    request = ThreadsCreateReq(params=ThreadCreateParams(input=said(text)))
    return request.model_dump_json().encode()


def add_message(thread_id: str, text: str) -> bytes:
    params = ThreadAddUserMessageParams(thread_id=thread_id, input=said(text))
    return ThreadsAddUserMessageReq(params=params).model_dump_json().encode()


def events_of(body: bytes) -> list[Any]:
    """The events of a Server-Sent Events body, as ChatKit's types."""
    return [
        EVENT.validate_json(line[len(b"data: ") :])
        for line in body.split(b"\n\n")
        if line.startswith(b"data: ")
    ]


async def streamed(result: Any) -> list[Any]:
    """Every event of a streaming result."""
    assert isinstance(result, StreamingResult)
    return events_of(b"".join([chunk async for chunk in result]))


def of_type(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.type == kind]
