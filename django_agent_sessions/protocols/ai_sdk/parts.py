"""The wire's events of one run as the AI SDK's UI message stream chunks (no Django).

A ``PartWriter`` follows one run for one response: ``begin()`` opens the assistant
message (its id is the run's id, so that a resumed stream and the stored history name
the same message), ``event()`` turns each wire event into chunks, and a terminal event
(or ``pause()``, when the run waits for approvals) ends it. Steps follow the model's
calls as the AI SDK counts them: one opens at the run's first content, and another at
the first content after tool outputs (the model answered them). ``messages`` builds the
stored history through the same writer, so that loading shows what streaming showed.
"""

from __future__ import annotations

import json
from typing import Any

Chunk = dict[str, Any]

TERMINAL_EVENTS = frozenset({"run.completed", "run.cancelled", "run.failed"})


def tool_input(arguments: Any) -> Any:
    """A call's input as the client shows it: the JSON the model wrote, parsed (its text
    as it is when it is not JSON: models do write that)."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments


def error_text(code: str, message: str) -> str:
    """An ``error`` chunk's text: the app's error code, then its translated message.
    ``useChat`` shows it as ``error.message``; the code is what precedes ``": "``."""
    return f"{code}: {message}"


class PartWriter:
    """The chunks of one run's assistant message (see the module)."""

    def __init__(self, known_calls: set[str] | None = None) -> None:
        self.run_id: str | None = None
        self.ended = False
        # Calls the client's message holds: outputs and approvals of others would make
        # it fail (it looks the call's part up), so they are not sent.
        self.calls: set[str] = set(known_calls or ())
        self._requested: set[str] = set()
        self._text_id: str | None = None
        self._text = ""
        self._parts = 0
        self._in_step = False
        self._after_outputs = False

    def begin(self, run_id: str) -> list[Chunk]:
        self.run_id = run_id
        return [{"type": "start", "messageId": run_id}]

    def event(self, frame: dict[str, Any]) -> list[Chunk]:
        kind = frame.get("type")
        if kind == "text.delta":
            return self.text(str(frame.get("delta", "")))
        if kind == "item.completed":
            return self.item(frame.get("item") or {})
        if kind == "approval.requested":
            return self.approval_requested(frame)
        if kind == "approval.resolved" and frame.get("call_id") in self._requested:
            response = {"type": "tool-approval-response", "approvalId": frame["call_id"]}
            return [{**response, "approved": bool(frame.get("approve"))}]
        if kind in TERMINAL_EVENTS:
            return self.end(frame)
        return []

    def text(self, delta: str) -> list[Chunk]:
        chunks: list[Chunk] = []
        if self._text_id is None:
            chunks += self._step()
            self._text_id = self._next_id("text")
            chunks.append({"type": "text-start", "id": self._text_id})
        if delta:
            self._text += delta
            chunks.append({"type": "text-delta", "id": self._text_id, "delta": delta})
        return chunks

    def item(self, item: dict[str, Any]) -> list[Chunk]:
        kind = item.get("kind")
        if kind == "message" and item.get("role") == "assistant":
            return self._completed_text(str(item.get("text", "")))
        if kind == "tool_call":
            return self._call(
                str(item.get("call_id")), str(item.get("name")), item.get("arguments")
            )
        if kind == "tool_output" and item.get("call_id") in self.calls:
            self._after_outputs = True
            call_id = str(item["call_id"])
            return [
                {
                    "type": "tool-output-available",
                    "toolCallId": call_id,
                    "output": item.get("output"),
                }
            ]
        if kind == "reasoning" and item.get("text"):
            chunks = [*self._close_text(), *self._step()]
            part_id = self._next_id("reasoning")
            chunks.append({"type": "reasoning-start", "id": part_id})
            chunks.append({"type": "reasoning-delta", "id": part_id, "delta": item["text"]})
            return [*chunks, {"type": "reasoning-end", "id": part_id}]
        return []  # the person's own message (the client has it), handoffs (their call shows)

    def approval_requested(self, frame: dict[str, Any]) -> list[Chunk]:
        call_id = str(frame.get("call_id"))
        chunks: list[Chunk] = []
        if call_id not in self.calls:  # a paused call the stream had not shown
            chunks += self._call(call_id, str(frame.get("name")), frame.get("arguments"))
        self._requested.add(call_id)
        request = {"type": "tool-approval-request", "approvalId": call_id, "toolCallId": call_id}
        return [*chunks, request]

    def pause(self) -> list[Chunk]:
        """The run waits for decisions: this response ends (the decisions come in the
        next request, and the run goes on in that one's response)."""
        return self._finish({"type": "finish", "finishReason": "tool-calls"})

    def end(self, frame: dict[str, Any]) -> list[Chunk]:
        kind = frame.get("type")
        if kind == "run.failed":
            error = frame.get("error") or {}
            failed = {
                "type": "error",
                "errorText": error_text(str(error.get("code")), str(error.get("message", ""))),
            }
            return [*self._finish(failed), {"type": "finish", "finishReason": "error"}]
        if kind == "run.cancelled":
            aborted = {"type": "abort", "reason": "cancelled"}
            return [*self._finish(aborted), {"type": "finish", "finishReason": "other"}]
        return self._finish({"type": "finish", "finishReason": "stop"})

    # The message's parts ----------------------------------------------------------

    def _finish(self, last: Chunk) -> list[Chunk]:
        chunks = self._close_text()
        if self._in_step:
            self._in_step = False
            chunks.append({"type": "finish-step"})
        self.ended = True
        return [*chunks, last]

    def _call(self, call_id: str, name: str, arguments: Any) -> list[Chunk]:
        chunks = [*self._close_text(), *self._step()]
        self.calls.add(call_id)
        named = {"toolCallId": call_id, "toolName": name}
        chunks.append({"type": "tool-input-start", **named})
        return [*chunks, {"type": "tool-input-available", **named, "input": tool_input(arguments)}]

    def _completed_text(self, full: str) -> list[Chunk]:
        """A stored message ends the text part; what its deltas lacked goes first."""
        if self._text_id is None:
            return [*self.text(full), *self._close_text()] if full else []
        missing = full[len(self._text) :] if full.startswith(self._text) else ""
        return [*(self.text(missing) if missing else []), *self._close_text()]

    def _close_text(self) -> list[Chunk]:
        if self._text_id is None:
            return []
        closed, self._text_id, self._text = self._text_id, None, ""
        return [{"type": "text-end", "id": closed}]

    def _step(self) -> list[Chunk]:
        if not self._in_step:
            self._in_step, self._after_outputs = True, False
            return [{"type": "start-step"}]
        if self._after_outputs:
            self._after_outputs = False
            return [{"type": "finish-step"}, {"type": "start-step"}]
        return []

    def _next_id(self, kind: str) -> str:
        self._parts += 1
        return f"{kind}-{self._parts}"
