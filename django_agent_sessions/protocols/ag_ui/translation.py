"""The wire's frames of one run as AG-UI events.

A ``Translation`` follows one AG-UI run: it is told the frames a ``Follower`` writes
(the same frames a websocket gets) and answers with the AG-UI events they become:

| frame | events |
|---|---|
| ``text.delta`` | ``TEXT_MESSAGE_START`` (first delta of a message), ``TEXT_MESSAGE_CONTENT`` |
| ``item.completed`` assistant message | ``TEXT_MESSAGE_END`` (after what did not stream) |
| ``item.completed`` tool call | ``TOOL_CALL_START``, ``TOOL_CALL_ARGS``, ``TOOL_CALL_END`` |
| ``item.completed`` tool output | ``TOOL_CALL_RESULT`` |
| ``item.completed`` reasoning | ``REASONING_START`` ... ``REASONING_END`` (when it has text) |
| ``approval.requested`` | an ``Interrupt`` of the run's ``RUN_FINISHED`` |
| ``run.completed`` / ``run.cancelled`` | ``RUN_FINISHED`` (success with usage / cancelled) |
| ``run.failed`` | ``RUN_ERROR`` with the wire's code |

The person's own message is not repeated (the client has it); ``handoff`` items and
``approval.resolved`` have no AG-UI event. Every frame of another run is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

TERMINAL = {"run.completed", "run.cancelled", "run.failed"}
# What an approval interrupt's answer looks like (``inputs.Decision``).
APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approve": {"type": "boolean"}, "message": {"type": "string"}},
    "required": ["approve"],
}


@dataclass
class Translation:
    """One AG-UI run (``thread_id``, ``run_id``: the client's) over one of ours."""

    thread_id: str
    run_id: str
    ours: str | None = None  # our run's id, once its ``run.started`` arrived
    finished: bool = False
    interrupts: list[Interrupt] = field(default_factory=list)
    _message_id: str | None = None  # the assistant message being streamed
    _streamed: str = ""  # its text so far
    _last_message_id: str | None = None  # the latest assistant message (a call's parent)

    def follow(self, run_id: str) -> None:
        self.ours = run_id

    def events(self, frame: dict[str, Any]) -> list[BaseEvent]:
        """The events ``frame`` becomes (none for another run's or a frame without one)."""
        if self.finished or self.ours is None or frame.get("run_id") != self.ours:
            return []
        kind = frame.get("type")
        if kind == "text.delta":
            return self._delta(str(frame["delta"]), frame["seq"])
        if kind == "item.completed":
            return self._item(frame["item"], frame["seq"])
        if kind == "approval.requested":
            self.interrupts.append(interrupt(frame))
            return []
        if kind in TERMINAL:
            return self.end(frame)
        return []

    def end(self, frame: dict[str, Any]) -> list[BaseEvent]:
        """The run's end: what is open is closed, then ``RUN_FINISHED`` or ``RUN_ERROR``."""
        self.finished = True
        closing = self._close_message()
        kind = frame.get("type")
        if kind == "run.failed":
            error = frame.get("error") or {}
            return [
                *closing,
                RunErrorEvent(message=error.get("message", ""), code=error.get("code")),
            ]
        outcome: Any = None
        if kind == "run.cancelled":
            outcome = RunFinishedCancelledOutcome()
        finished = RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            result=frame.get("final_output"),
            outcome=outcome,
            usage=_usage(frame.get("usage")),
        )
        return [*closing, finished]

    def pause(self) -> list[BaseEvent]:
        """The run waits for decisions: this AG-UI run ends with its interrupts (answered
        by a later request's ``resume``)."""
        self.finished = True
        outcome = RunFinishedInterruptOutcome(interrupts=self.interrupts)
        finished = RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, outcome=outcome)
        return [*self._close_message(), finished]

    def _delta(self, delta: str, seq: int) -> list[BaseEvent]:
        events: list[BaseEvent] = []
        if self._message_id is None:
            self._message_id = self._last_message_id = f"{self.ours}:{seq}"
            events.append(TextMessageStartEvent(message_id=self._message_id, role="assistant"))
        self._streamed += delta
        if delta:
            events.append(TextMessageContentEvent(message_id=self._message_id, delta=delta))
        return events

    def _item(self, item: dict[str, Any], seq: int) -> list[BaseEvent]:
        kind = item.get("kind")
        if kind == "message" and item.get("role") == "assistant":
            text = str(item.get("text", ""))
            # A message that streamed nothing (or less than it holds: deltas the layer
            # lost) gets its text here: the completed item is authoritative.
            events = [] if self._message_id is not None else self._delta("", seq)
            if text.startswith(self._streamed) and len(text) > len(self._streamed):
                events += self._delta(text[len(self._streamed) :], seq)
            return [*events, *self._close_message()]
        if kind == "tool_call":
            call_id = str(item["call_id"])
            return [
                *self._close_message(),
                ToolCallStartEvent(
                    tool_call_id=call_id,
                    tool_call_name=str(item["name"]),
                    parent_message_id=self._last_message_id,
                ),
                ToolCallArgsEvent(tool_call_id=call_id, delta=str(item.get("arguments") or "{}")),
                ToolCallEndEvent(tool_call_id=call_id),
            ]
        if kind == "tool_output":
            call_id = str(item["call_id"])
            result = ToolCallResultEvent(
                message_id=f"{call_id}:output",
                tool_call_id=call_id,
                content=str(item.get("output", "")),
                role="tool",
            )
            return [*self._close_message(), result]
        if kind == "reasoning" and item.get("text"):
            return [*self._close_message(), *_reasoning(f"{self.ours}:{seq}", str(item["text"]))]
        return []

    def _close_message(self) -> list[BaseEvent]:
        if self._message_id is None:
            return []
        ended = TextMessageEndEvent(message_id=self._message_id)
        self._message_id, self._streamed = None, ""
        return [ended]


def interrupt(request: dict[str, Any]) -> Interrupt:
    """An ``approval.requested`` frame (or a history frame's pending approval) as an
    AG-UI interrupt: answered by a resume entry whose id is the call's."""
    return Interrupt(
        id=str(request["call_id"]),
        reason="tool_approval",
        message=str(request.get("description") or request.get("name") or ""),
        tool_call_id=str(request["call_id"]),
        response_schema=APPROVAL_SCHEMA,
        expires_at=request.get("expires_at") or None,
        metadata={"name": request.get("name"), "arguments": request.get("arguments")},
    )


def _reasoning(message_id: str, text: str) -> list[BaseEvent]:
    return [
        ReasoningStartEvent(message_id=message_id),
        ReasoningMessageStartEvent(message_id=message_id, role="reasoning"),
        ReasoningMessageContentEvent(message_id=message_id, delta=text),
        ReasoningMessageEndEvent(message_id=message_id),
        ReasoningEndEvent(message_id=message_id),
    ]


def _usage(usage: Any) -> list[TokenUsage] | None:
    if not isinstance(usage, dict):
        return None
    return [
        TokenUsage(
            input_tokens=usage.get("input_tokens"),
            output_tokens=usage.get("output_tokens"),
            total_tokens=usage.get("total_tokens"),
        )
    ]
