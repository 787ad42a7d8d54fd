"""The SDK form of a ChatKit item, the one ``DjangoSession`` reads (no Django).

A user message and an assistant message are what both vocabularies have: they become
the SDK's message items, as ChatKit's own ``ThreadItemConverter`` gives them to the
model (the user's text with tags as ``@tag``; the assistant's ``output_text`` parts).
Everything else (widgets, workflows, tasks, hidden context, client tool calls, generated
images, structured input, end of turn) is ChatKit's alone and has no SDK form here:
ChatKit's converter turns it into model input when it runs the agent itself.
"""

from __future__ import annotations

from typing import Any

from chatkit.types import AssistantMessageItem, ThreadItem, UserMessageItem, UserMessageTagContent


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
