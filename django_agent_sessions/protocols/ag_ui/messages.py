"""A conversation's stored history as AG-UI messages (``MESSAGES_SNAPSHOT``).

The items are the ``history`` frame's display items (``streaming.encoding``), so the
snapshot shows what the packaged chat shows: a person's message keeps the id its client
gave it (the wire's ``client_id``) or takes the stored item's; tool calls join the
assistant message before them (AG-UI's ``toolCalls``), each output is a tool message;
a reply that was stopped or failed (a run note) is an assistant message whose metadata
says so.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import (
    AssistantMessage,
    DeveloperMessage,
    FunctionCall,
    Message,
    ReasoningMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)


def snapshot(items: list[dict[str, Any]]) -> list[Message]:
    """``items`` (oldest first) as AG-UI messages."""
    messages: list[Message] = []
    for position, item in enumerate(items):
        message_id = _id(item, position)
        kind = item.get("kind")
        if kind == "message":
            messages.append(_message(item, message_id))
        elif kind == "tool_call":
            _call(messages, item, message_id)
        elif kind == "tool_output":
            messages.append(
                ToolMessage(
                    id=message_id,
                    tool_call_id=str(item["call_id"]),
                    content=str(item.get("output", "")),
                )
            )
        elif kind == "reasoning" and item.get("text"):
            messages.append(ReasoningMessage(id=message_id, content=str(item["text"])))
    return messages


def _id(item: dict[str, Any], position: int) -> str:
    if item.get("client_id"):
        return str(item["client_id"])
    if item.get("id") is not None:
        return f"item-{item['id']}"
    # A run note has no stored id: its run's is unique to it.
    return f"run-{item.get('run_id') or position}"


def _message(item: dict[str, Any], message_id: str) -> Message:
    text, role = str(item.get("text", "")), item.get("role")
    if role == "user":
        return UserMessage(id=message_id, content=text)
    if role == "system":
        return SystemMessage(id=message_id, content=text)
    if role == "developer":
        return DeveloperMessage(id=message_id, content=text)
    metadata = None
    if item.get("status"):  # a run note: what a stopped or failed run had streamed
        metadata = {
            "status": item["status"],
            **({"error": item["error"]} if "error" in item else {}),
        }
    return AssistantMessage(id=message_id, content=text, metadata=metadata)


def _call(messages: list[Message], item: dict[str, Any], message_id: str) -> None:
    """A tool call joins the assistant message right before it, or opens one."""
    call = ToolCall(
        id=str(item["call_id"]),
        function=FunctionCall(name=str(item["name"]), arguments=str(item.get("arguments") or "")),
    )
    last = messages[-1] if messages else None
    if isinstance(last, AssistantMessage) and not (last.metadata or {}).get("status"):
        last.tool_calls = [*(last.tool_calls or []), call]
    else:
        messages.append(AssistantMessage(id=message_id, tool_calls=[call]))
