"""An offline ``agents`` model: deterministic replies, streamed word by word.

``DemoModel`` implements ``agents.models.interface.Model`` the way a provider does: it
emits the same Responses stream events as OpenAI (output items, text deltas, function
call arguments, reasoning summaries, ``response.completed`` with usage), so the Runner,
the session, the websocket layer and the browser all do their real work without a network.
What it says is decided in ``demo_script.py``.

The pause between words is ``DEMO_MODEL_DELAY`` seconds (default 0.05, about the pace of
a hosted model); tests set it near zero.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast

from agents import Model, ModelResponse, ModelSettings, ModelTracing, Tool
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningSummaryTextDoneEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)
from openai.types.responses.response_prompt_param import ResponsePromptParam

from example_project import demo_responses
from example_project.demo_script import plan_turn

DEFAULT_DELAY = 0.05
_WORDS = re.compile(r"\s*\S+\s*")


def word_delay_from_environment() -> float:
    raw = os.environ.get("DEMO_MODEL_DELAY", "")
    if not raw:
        return DEFAULT_DELAY
    try:
        delay = float(raw)
    except ValueError:
        raise ValueError(f"DEMO_MODEL_DELAY must be a number of seconds, not {raw!r}") from None
    if not 0 <= delay <= 10:
        raise ValueError(f"DEMO_MODEL_DELAY must be between 0 and 10 seconds, not {delay}")
    return delay


class DemoModel(Model):
    """A deterministic model that needs no API key. See the module docstring."""

    def __init__(self, *, word_delay: float | None = None) -> None:
        self.word_delay = word_delay_from_environment() if word_delay is None else word_delay

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> ModelResponse:
        items = _as_items(input)
        turn = plan_turn(items, _tool_names(tools))
        output = demo_responses.output_items(turn, len(items))
        return ModelResponse(
            output=output,
            usage=demo_responses.usage(items, output),
            response_id=demo_responses.response_id(items),
        )

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        items = _as_items(input)
        turn = plan_turn(items, _tool_names(tools))
        output = demo_responses.output_items(turn, len(items))
        stream = _EventStream()
        yield stream.event(
            ResponseCreatedEvent,
            type="response.created",
            response=demo_responses.response(items, [], None),
        )
        for index, item in enumerate(output):
            yield stream.event(
                ResponseOutputItemAddedEvent,
                type="response.output_item.added",
                output_index=index,
                item=demo_responses.in_progress(item),
            )
            async for event in self._item_events(stream, index, item):
                yield event
            yield stream.event(
                ResponseOutputItemDoneEvent,
                type="response.output_item.done",
                output_index=index,
                item=item,
            )
        yield stream.event(
            ResponseCompletedEvent,
            type="response.completed",
            response=demo_responses.response(items, output, demo_responses.usage(items, output)),
        )

    async def _item_events(
        self, stream: _EventStream, index: int, item: TResponseOutputItem
    ) -> AsyncIterator[TResponseStreamEvent]:
        if isinstance(item, ResponseReasoningItem):
            async for event in self._reasoning_events(stream, index, item):
                yield event
        elif isinstance(item, ResponseFunctionToolCall):
            await asyncio.sleep(self.word_delay * 4)  # a model "thinks" before calling a tool
            ids = {"item_id": item.id or item.call_id, "output_index": index}
            yield stream.event(
                ResponseFunctionCallArgumentsDeltaEvent,
                type="response.function_call_arguments.delta",
                delta=item.arguments,
                **ids,
            )
            yield stream.event(
                ResponseFunctionCallArgumentsDoneEvent,
                type="response.function_call_arguments.done",
                arguments=item.arguments,
                name=item.name,
                **ids,
            )
        elif isinstance(item, ResponseOutputMessage):
            async for event in self._text_events(stream, index, item):
                yield event

    async def _text_events(
        self, stream: _EventStream, index: int, item: ResponseOutputMessage
    ) -> AsyncIterator[TResponseStreamEvent]:
        part = cast(ResponseOutputText, item.content[0])
        ids = {"item_id": item.id, "output_index": index, "content_index": 0}
        yield stream.event(
            ResponseContentPartAddedEvent,
            type="response.content_part.added",
            part=part.model_copy(update={"text": ""}),
            **ids,
        )
        for word in _WORDS.findall(part.text):
            await asyncio.sleep(self.word_delay)
            yield stream.event(
                ResponseTextDeltaEvent,
                type="response.output_text.delta",
                delta=word,
                logprobs=[],
                **ids,
            )
        yield stream.event(
            ResponseTextDoneEvent,
            type="response.output_text.done",
            text=part.text,
            logprobs=[],
            **ids,
        )
        yield stream.event(
            ResponseContentPartDoneEvent, type="response.content_part.done", part=part, **ids
        )

    async def _reasoning_events(
        self, stream: _EventStream, index: int, item: ResponseReasoningItem
    ) -> AsyncIterator[TResponseStreamEvent]:
        text = item.summary[0].text
        ids = {"item_id": item.id, "output_index": index, "summary_index": 0}
        for word in _WORDS.findall(text):
            await asyncio.sleep(self.word_delay / 2)
            yield stream.event(
                ResponseReasoningSummaryTextDeltaEvent,
                type="response.reasoning_summary_text.delta",
                delta=word,
                **ids,
            )
        yield stream.event(
            ResponseReasoningSummaryTextDoneEvent,
            type="response.reasoning_summary_text.done",
            text=text,
            **ids,
        )


class _EventStream:
    """Numbers events in order, as the Responses API does."""

    def __init__(self) -> None:
        self.sequence_number = 0

    def event(self, event_class: type[Any], **fields: Any) -> TResponseStreamEvent:
        event = event_class.model_validate({**fields, "sequence_number": self.sequence_number})
        self.sequence_number += 1
        return cast(TResponseStreamEvent, event)


def _as_items(input: str | list[TResponseInputItem]) -> list[Mapping[str, Any]]:
    if isinstance(input, str):
        return [{"role": "user", "content": input}]
    return [item for item in cast(Sequence[Any], input) if isinstance(item, Mapping)]


def _tool_names(tools: list[Tool]) -> set[str]:
    return {str(getattr(tool, "name", "")) for tool in tools}
