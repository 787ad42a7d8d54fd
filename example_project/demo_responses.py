"""The Responses objects the demo model returns: output items, the response, usage.

Ids derive from the conversation's length, so they are deterministic and unique within
a conversation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents import Usage
from agents.items import TResponseOutputItem
from openai.types.responses import (
    Response,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseUsage,
)
from openai.types.responses.response_reasoning_item import Summary
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from example_project.demo_script import DemoTurn, ToolRequest

MODEL_NAME = "offline-demo"


def output_items(turn: DemoTurn, position: int) -> list[TResponseOutputItem]:
    """The output items of one response to a conversation of ``position`` items."""
    if turn.tool is not None:
        return [_reasoning(turn.tool, position), _function_call(turn.tool, position)]
    return [
        ResponseOutputMessage(
            id=f"msg_demo_{position}",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=turn.text, annotations=[])],
        )
    ]


def _reasoning(tool: ToolRequest, position: int) -> ResponseReasoningItem:
    return ResponseReasoningItem(
        id=f"rs_demo_{position}",
        type="reasoning",
        summary=[Summary(type="summary_text", text=tool.reasoning)],
    )


def _function_call(tool: ToolRequest, position: int) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=f"fc_demo_{position}",
        call_id=f"call_demo_{position}",
        type="function_call",
        name=tool.name,
        arguments=json.dumps(tool.arguments, separators=(",", ":")),
        status="completed",
    )


def in_progress(item: TResponseOutputItem) -> TResponseOutputItem:
    if isinstance(item, ResponseOutputMessage):
        return item.model_copy(update={"content": [], "status": "in_progress"})
    if isinstance(item, ResponseFunctionToolCall):
        return item.model_copy(update={"arguments": "", "status": "in_progress"})
    if isinstance(item, ResponseReasoningItem):
        return item.model_copy(update={"summary": []})
    return item


def response_id(items: Sequence[Mapping[str, Any]]) -> str:
    return f"resp_demo_{len(items)}"


def response(
    items: Sequence[Mapping[str, Any]],
    output: list[TResponseOutputItem],
    usage: Usage | None,
) -> Response:
    return Response(
        id=response_id(items),
        created_at=0,
        model=MODEL_NAME,
        object="response",
        output=output,
        tool_choice="auto",
        tools=[],
        parallel_tool_calls=False,
        status="completed" if usage is not None else "in_progress",
        usage=None if usage is None else _response_usage(usage),
    )


def usage(items: Sequence[Mapping[str, Any]], output: list[TResponseOutputItem]) -> Usage:
    """Token counts estimated as words, so the usage columns have realistic numbers."""
    input_tokens = sum(len(json.dumps(item, default=str).split()) for item in items)
    output_tokens = sum(len(_visible_text(item).split()) + 1 for item in output)
    return Usage(
        requests=1,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )


def _visible_text(item: TResponseOutputItem) -> str:
    if isinstance(item, ResponseOutputMessage):
        return " ".join(getattr(part, "text", "") for part in item.content)
    if isinstance(item, ResponseFunctionToolCall):
        return f"{item.name} {item.arguments}"
    if isinstance(item, ResponseReasoningItem):
        return " ".join(summary.text for summary in item.summary)
    return ""


def _response_usage(usage: Usage) -> ResponseUsage:
    return ResponseUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
    )
