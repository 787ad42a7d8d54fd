"""Running an agent and turning the SDK's stream into wire events. No websocket code.

``StreamedRun`` drives ``Runner.run_streamed(...).stream_events()`` and yields the wire
events of ``docs/wire-protocol.md``: ``run.started``, ``item.completed``, ``text.delta``
and one of ``run.completed`` / ``run.cancelled`` / ``run.failed``. Every event carries the
run's ``run_id`` and a ``seq`` number, counting from 1.

Text deltas are coalesced: sent ``flush_seconds`` after the first pending one, or once
``flush_bytes`` are pending, and always before any other event, so a message's deltas
add up to its text in ``item.completed``. A task drains the SDK's stream into a queue (a
slow reader delays the frames, not the agent), where a timer queues each flush.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from agents import Agent, RunConfig
from agents.items import ToolCallOutputItem
from agents.memory import Session
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent, StreamEvent

from django_agent_sessions.streaming.running.message import UserInput
from django_agent_sessions.streaming.running.outcomes import WAITING, Outcome, settle, terminal
from django_agent_sessions.streaming.running.queued import End as _End
from django_agent_sessions.streaming.running.queued import FlushDue as _FlushDue
from django_agent_sessions.streaming.running.queued import Shown as _Shown
from django_agent_sessions.streaming.running.sdk_run import SdkRun
from django_agent_sessions.streaming.running.spending import Spending
from django_agent_sessions.streaming.wire.encoding import display_run_item, frame_size

logger = logging.getLogger(__name__)

_TEXT_DELTAS = {"response.output_text.delta", "response.refusal.delta"}


class StreamedRun:
    """One agent run with ``text`` (or a ``UserInput`` with files) as input, as a
    sequence of wire events.

    With ``state`` (a paused run restored with its decisions, see ``paused.restore``)
    it resumes that run instead: ``run.started`` carries ``resumed: true``, no user
    message is added, and ``seq`` continues after ``first_seq``. A run that stops on tool
    calls needing approval ends with ``outcome.status == WAITING`` and no terminal
    event; ``approval_events()`` then numbers its ``approval.requested`` events.
    """

    def __init__(
        self,
        agent: Agent[Any],
        text: str | UserInput,
        *,
        run_id: str,
        session: Session | None = None,
        context: Any = None,
        run_config: RunConfig | None = None,
        flush_seconds: float = 0.04,
        flush_bytes: int = 1024,
        max_bytes: int | None = None,
        run_tokens: int | None = None,
        state: Any = None,
        first_seq: int = 0,
        client_id: str = "",
    ) -> None:
        self.client_id = client_id
        self.agent = agent
        self.state = state
        self.message = text if isinstance(text, UserInput) else UserInput(text)
        self.run_id = run_id
        self.session = session
        self.context = context
        self.run_config = run_config
        self.flush_seconds = flush_seconds
        self.flush_bytes = flush_bytes
        self.max_bytes = max_bytes
        self.outcome = Outcome()
        self.spending = Spending(run_config, ceiling=run_tokens)  # the run's RunHooks
        self._seq = first_seq
        self._sent_bytes = 0  # of every frame so far, as the socket gets them
        self._over_budget = False
        # The most a text.delta frame adds around its text (seq counted at ten digits).
        self._delta_envelope = frame_size(self._frame("text.delta", 10**9, delta=""))
        self._items: list[dict[str, Any]] = []
        self._item_seqs: list[int] = []  # each item's item.completed, for a catch-up
        self._text_seq = 0  # of the last text.delta
        # Tool outputs as model input, by call id, for a run ending before the SDK saves them.
        self.outputs: dict[str, Any] = {}
        # The current message's text sent so far, in pieces: appending to one string copied
        # it each time (a 2 MiB run spent a quarter of its worker's CPU there).
        self._streamed: list[str] = []
        self._pending = ""  # received, not yet sent
        self._batch = 0  # pending texts so far: a flush marker names its own
        self._queue: asyncio.Queue[StreamEvent | _End | _FlushDue | _Shown] = asyncio.Queue()
        self._cancel_requested = False
        self._sdk = SdkRun(self._queue)

    def cancel(self) -> None:
        """Stop the run. The turn in progress is dropped; completed turns stay saved."""
        self._cancel_requested = True
        self._sdk.cancel()

    def show(self, item: dict[str, Any]) -> None:
        """Send ``item`` as an ``item.completed``, after the events queued so far."""
        self._queue.put_nowait(_Shown(item))

    def snapshot(self) -> dict[str, Any]:
        """What a socket joining mid-run needs: the run's items so far, the text already
        streamed of the current message, and the ``seq`` of the last event sent."""
        return {
            "run_id": self.run_id,
            "seq": self._seq,
            "items": list(self._items),
            "text": self._streamed_text(),
            "item_seqs": list(self._item_seqs),
            "text_seq": self._text_seq,
        }

    @property
    def seq(self) -> int:
        """The ``seq`` of the last event."""
        return self._seq

    async def events(self) -> AsyncGenerator[dict[str, Any], None]:
        resumed = self.state is not None
        started = {"resumed": True} if resumed else {}
        # The SDK's run begins before the run's first events go out: its history read,
        # the person's message saved and the model's call overlap their trip through the
        # channel layer (round trips to Redis for a run in a task worker). Its events
        # wait in the queue, so the wire's order is the same.
        not_begun = self._sdk.begin(
            self.agent,
            self.state if resumed else self.message.model_input(),
            cancelled=self._cancel_requested,
            session=self.session,
            context=None if resumed else self.context,  # a resumed one's is in its state
            run_config=self.run_config,
            hooks=self.spending,
        )
        try:
            yield self._event("run.started", agent=self.agent.name, **started)
            if not resumed:
                yield self._item_event(self.message.shown(self.client_id))
            if not_begun is not None:
                raise not_begun
            async for event in self._translated():
                yield event
        finally:
            await self._sdk.stop()
        final = self._finish(self._sdk.end())
        if final is not None:
            yield final

    async def _translated(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            event = await self._queue.get()
            if isinstance(event, _FlushDue):
                if self._pending and event.batch == self._batch:
                    yield self._flush()
                continue
            if isinstance(event, _End):
                return
            for wire in self._translate(event):
                yield wire
            stop = self._stop_code()
            if stop:
                self.cancel()
                self.outcome.error_code = stop
                return
            if self._pending and len(self._pending.encode("utf-8", "replace")) >= self.flush_bytes:
                yield self._flush()

    def _translate(self, event: StreamEvent | _Shown) -> list[dict[str, Any]]:
        if isinstance(event, _Shown):
            return self._shown(event.item)
        if isinstance(event, RawResponsesStreamEvent):
            if event.data.type in _TEXT_DELTAS:
                self._add_delta(getattr(event.data, "delta", ""))
            return []
        if isinstance(event, RunItemStreamEvent):
            if isinstance(event.item, ToolCallOutputItem):
                output = event.item.to_input_item()
                self.outputs[str(output.get("call_id", ""))] = output
            return self._shown(display_run_item(event.item))
        return []  # agent updates: handoffs show up as items

    def _shown(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        if not self._fits(frame_size(self._frame("item.completed", 10**9, item=item))):
            self._over_budget = True
            return []
        out = [self._flush()] if self._pending else []
        if item["kind"] == "message":
            self._streamed.clear()
        out.append(self._item_event(item))
        return out

    def _add_delta(self, delta: str) -> None:
        if not delta:
            return
        if not self._pending:
            # A marker queued then flushes it (a timeout on every wait cost a task per token).
            self._batch += 1
            flush = functools.partial(self._queue.put_nowait, _FlushDue(self._batch))
            asyncio.get_running_loop().call_later(self.flush_seconds, flush)
        self._pending += delta

    def _flush(self) -> dict[str, Any]:
        delta, self._pending = self._pending, ""
        self._streamed.append(delta)
        event = self._event("text.delta", delta=delta)
        self._text_seq = event["seq"]
        return event

    def _item_event(self, item: dict[str, Any]) -> dict[str, Any]:
        event = self._event("item.completed", item=item)
        self._items.append(item)
        self._item_seqs.append(event["seq"])
        return event

    def _streamed_text(self) -> str:
        text = "".join(self._streamed)
        self._streamed[:] = [text] if text else []
        return text

    def _stop_code(self) -> str:
        """Why the run stops now: its frames reached ``max_bytes`` (none past it is sent,
        pending text included) or its tokens passed ``run_tokens``; else ""."""
        if self._over_budget or not self._fits(0):
            return "run_too_large"
        return "run_token_limit" if self.spending.over_ceiling else ""

    def _fits(self, next_frame_bytes: int) -> bool:
        """Whether the frames sent, the pending text's frame and one more of
        ``next_frame_bytes`` stay within ``max_bytes``."""
        if self.max_bytes is None:
            return True
        # The pending text's frame: its escaped text (minus the quotes) in the envelope.
        pending = self._delta_envelope + frame_size(self._pending) - 2 if self._pending else 0
        return self._sent_bytes + pending + next_frame_bytes <= self.max_bytes

    def _finish(self, end: _End) -> dict[str, Any] | None:
        settle(
            self.outcome,
            self._sdk.result,
            end.error,
            cancelled=self._cancel_requested,
            max_bytes=self.max_bytes,
            run_id=self.run_id,
        )
        # A paused run is not over: see approval_events().
        return None if self.outcome.status == WAITING else self.final_event()

    def approval_events(self, expires_at: str) -> list[dict[str, Any]]:
        """One ``approval.requested`` per call the paused run waits for."""
        return [
            self._event(
                "approval.requested",
                call_id=call.call_id,
                name=call.name,
                description=call.description,
                arguments=call.arguments,
                expires_at=expires_at,
            )
            for call in self.outcome.calls
        ]

    def final_event(self) -> dict[str, Any]:
        """The terminal event for ``outcome``: completed, cancelled or failed."""
        type_, fields = terminal(self.outcome)
        return self._event(type_, **fields)

    def _event(self, type_: str, **fields: Any) -> dict[str, Any]:
        self._seq += 1
        event = self._frame(type_, self._seq, **fields)
        self._sent_bytes += frame_size(event) if self.max_bytes is not None else 0
        return event

    def _frame(self, type_: str, seq: int, **fields: Any) -> dict[str, Any]:
        return {"type": type_, "run_id": self.run_id, "seq": seq, **fields}
