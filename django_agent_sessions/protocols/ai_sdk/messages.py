"""A conversation's stored history as the AI SDK's ``UIMessage`` list (no Django).

The items are the ``history`` frame's (display-ready, oldest first, with their ``id``
and ``run_id``). A person's message is a ``user`` message, its id the one the client
gave it (``client_id``) or ``item-<id>``; the items a run stored after it (and the text
a stopped run had streamed) are one ``assistant`` message whose id is the run's, as its
stream's ``start`` says. The parts come from the stream's own ``PartWriter``, applied as
the client applies chunks, so that a reloaded conversation shows what was streamed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django_agent_sessions.protocols.ai_sdk.parts import Chunk, PartWriter

FileUrl = Callable[[dict[str, Any]], str | None]  # a stored file's download URL


def ui_messages(
    items: list[dict[str, Any]],
    pending: Sequence[dict[str, Any]] = (),
    *,
    file_url: FileUrl = lambda file: None,
) -> list[dict[str, Any]]:
    """``items`` (and the calls ``pending`` a decision) as ``UIMessage`` dicts."""
    messages: list[dict[str, Any]] = []
    runs: dict[str, _Assistant] = {}  # by message id: where a pending call belongs
    assistant: _Assistant | None = None
    for item in items:
        if item.get("kind") == "message" and item.get("role") in ("system", "developer"):
            continue  # instructions, not the chat's
        if item.get("kind") == "message" and item.get("role") == "user":
            assistant = None
            messages.append(user_message(item, file_url))
            continue
        run_id = item.get("run_id")  # None: stored by other code (imported, a script)
        if assistant is None or assistant.run_id != run_id:
            assistant = _Assistant(run_id or f"item-{item.get('id')}", run_id)
            runs[assistant.message["id"]] = assistant
            messages.append(assistant.message)
        assistant.add(item)
    for call in pending:
        run_id = str(call.get("run_id"))
        if run_id not in runs:  # its run stored nothing before it paused
            runs[run_id] = _Assistant(run_id, run_id)
            messages.append(runs[run_id].message)
        waiting = runs[run_id]
        waiting.apply(waiting.writer.approval_requested(call))
    # A run stopped before it said anything left a note of nothing: no message.
    return [message for message in messages if message["parts"] or message["role"] == "user"]


def user_message(item: dict[str, Any], file_url: FileUrl) -> dict[str, Any]:
    """As ``useChat`` sends one: its files first, then its text."""
    parts: list[dict[str, Any]] = []
    for file in item.get("files") or []:
        url = file_url(file)
        if url is not None:
            parts.append(
                {
                    "type": "file",
                    "mediaType": file["content_type"],
                    "filename": file["name"],
                    "url": url,
                }
            )
    if item.get("text"):
        parts.append({"type": "text", "text": item["text"]})
    message_id = item.get("client_id") or f"item-{item.get('id')}"
    return {"id": message_id, "role": "user", "parts": parts}


class _Assistant:
    """One assistant message being built from its run's items."""

    def __init__(self, message_id: str, run_id: str | None) -> None:
        self.run_id = run_id
        self.message: dict[str, Any] = {"id": message_id, "role": "assistant", "parts": []}
        self.writer = PartWriter()
        self._open: dict[str, dict[str, Any]] = {}  # text and reasoning parts, by chunk id
        self._tools: dict[str, dict[str, Any]] = {}

    def add(self, item: dict[str, Any]) -> None:
        if item.get("id") is None and item.get("status"):  # a stopped run's streamed reply
            item = {"kind": "message", "role": "assistant", "text": item.get("text", "")}
        self.apply(self.writer.item(item))

    def apply(self, chunks: list[Chunk]) -> None:
        """The chunks, as the client's ``processUIMessageStream`` applies them."""
        parts = self.message["parts"]
        for chunk in chunks:
            kind = chunk["type"]
            if kind == "start-step":
                parts.append({"type": "step-start"})
            elif kind in ("text-start", "reasoning-start"):
                part = {"type": kind.split("-")[0], "text": "", "state": "streaming"}
                self._open[chunk["id"]] = part
                parts.append(part)
            elif kind in ("text-delta", "reasoning-delta"):
                self._open[chunk["id"]]["text"] += chunk["delta"]
            elif kind in ("text-end", "reasoning-end"):
                self._open.pop(chunk["id"])["state"] = "done"
            elif kind == "tool-input-available":
                part = {"type": f"tool-{chunk['toolName']}", "toolCallId": chunk["toolCallId"]}
                parts.append({**part, "state": "input-available", "input": chunk["input"]})
                self._tools[chunk["toolCallId"]] = parts[-1]
            elif kind == "tool-output-available":
                tool = self._tools[chunk["toolCallId"]]
                tool.update(state="output-available", output=chunk["output"])
            elif kind == "tool-approval-request":
                tool = self._tools[chunk["toolCallId"]]
                tool.update(state="approval-requested", approval={"id": chunk["approvalId"]})
