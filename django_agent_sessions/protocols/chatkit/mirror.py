"""The SDK form of a ChatKit item, the one ``DjangoSession`` reads, and the ChatKit form
of an SDK message that ChatKit did not write (no Django).

A user message and an assistant message are what both vocabularies have: they become
the SDK's message items, as ChatKit's own ``ThreadItemConverter`` gives them to the
model (the user's text with tags as ``@tag``; the assistant's ``output_text`` parts).
Everything else (widgets, workflows, tasks, hidden context, client tool calls, generated
images, structured input, end of turn) is ChatKit's alone and has no SDK form here:
ChatKit's converter turns it into model input when it runs the agent itself. The
other way, a user or assistant message of the packaged chat shows in ChatKit as its
text (``chatkit_item``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chatkit.types import (
    AssistantMessageContent,
    AssistantMessageItem,
    InferenceOptions,
    ThreadItem,
    UserMessageItem,
    UserMessageTagContent,
    UserMessageTextContent,
)

# The content parts whose text a message shows.
TEXT_PARTS = ("input_text", "output_text", "text")


def sdk_item(item: ThreadItem) -> dict[str, Any] | None:
    """The SDK message of a user or assistant message; None for any other item."""
    if isinstance(item, UserMessageItem):
        text = "".join(
            f"@{part.text}" if isinstance(part, UserMessageTagContent) else part.text
            for part in item.content
        )
        return {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }
    if isinstance(item, AssistantMessageItem):
        parts = [
            {"type": "output_text", "text": part.text, "annotations": []} for part in item.content
        ]
        return {"type": "message", "role": "assistant", "content": parts}
    return None


def chatkit_item(item_id: str, thread_id: str, created_at: datetime, sdk: Any) -> ThreadItem | None:
    """The ChatKit message of an SDK user or assistant message; None for anything else."""
    role = sdk.get("role") if isinstance(sdk, dict) else None
    content = sdk.get("content") if isinstance(sdk, dict) else None
    texts = [content] if isinstance(content, str) else _texts(content)
    if role == "user":
        return UserMessageItem(
            id=item_id,
            thread_id=thread_id,
            created_at=created_at,
            content=[UserMessageTextContent(text="".join(texts))],
            inference_options=InferenceOptions(),
        )
    if role == "assistant":
        parts = [AssistantMessageContent(text=text) for text in texts]
        return AssistantMessageItem(
            id=item_id, thread_id=thread_id, created_at=created_at, content=parts
        )
    return None


def _texts(content: Any) -> list[str]:
    parts = content if isinstance(content, list) else []
    return [
        str(part.get("text", ""))
        for part in parts
        if isinstance(part, dict) and part.get("type") in TEXT_PARTS
    ]
