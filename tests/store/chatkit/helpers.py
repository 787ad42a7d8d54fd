"""ChatKit rows for the store's tests: payloads as ChatKit writes them (any JSON text
will do for the store, which never reads them) and the SDK forms of messages."""

from __future__ import annotations

from typing import Any


def said(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def answered(text: str) -> dict[str, Any]:
    parts = [{"type": "output_text", "text": text, "annotations": []}]
    return {"type": "message", "role": "assistant", "content": parts}


def payload(item_id: str, kind: str = "user_message") -> str:
    return f'{{"id": "{item_id}", "type": "{kind}"}}'
