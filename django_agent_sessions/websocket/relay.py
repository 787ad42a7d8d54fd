"""Relaying a conversation to one socket: the history frame on connect, a running run's
catch-up, and the run's events, in order. A mixin of ``AgentSessionConsumer``.

A socket that connects while a run is in flight (here or in another worker) asks the run
where it is (``agent.catchup``) and holds the run's events until the answer
(``agent.snapshot``) or a timeout, so nothing is shown twice and nothing is missed.
Events are put back in order per run by ``ordering.Sequencer``; a gap that is not filled
within ``GAP_TIMEOUT`` is skipped (the completed item repairs lost text).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from django_agent_sessions.conf import app_settings
from django_agent_sessions.websocket import records, runs, wire
from django_agent_sessions.websocket.ordering import Sequencer

CATCHUP_TIMEOUT = 1.0
GAP_TIMEOUT = 0.5
_MAX_BUFFERED = 1000


class RelayMixin:
    """History, catch-up and ordered relay of run events, for a websocket consumer."""

    conversation_pk: int | None
    channel_layer: Any
    channel_name: str
    _catchup_timer: asyncio.Task[None] | None = None

    if TYPE_CHECKING:  # provided by the consumer

        async def send_json(self, content: Any, close: bool = False) -> None: ...

    def start_relay(self) -> None:
        self._sequencer = Sequencer()
        self._gap_timers: dict[str, asyncio.Task[None]] = {}
        self._buffer: list[dict[str, Any]] | None = None  # while waiting for a snapshot

    def stop_relay(self) -> None:
        timers = [self._catchup_timer, *getattr(self, "_gap_timers", {}).values()]
        for timer in timers:
            if timer is not None:
                timer.cancel()

    async def send_history(self) -> None:
        assert self.conversation_pk is not None
        history = await self._load_history(up_to_item_id=None)
        if history.active_run_id is None:
            return await self._send_history_frame(history, None)
        # A run is in flight (here or in another worker): ask it where it is, and hold
        # its events until the answer (or the timeout) so nothing is shown twice.
        self._buffer = []
        await self.channel_layer.group_send(
            runs.control_group_name(self.conversation_pk),
            {"type": "agent.catchup", "reply_to": self.channel_name},
        )
        self._catchup_timer = asyncio.create_task(self._catchup_timeout())

    async def _load_history(self, up_to_item_id: int | None) -> records.History:
        assert self.conversation_pk is not None
        return await records.read_history(
            self.conversation_pk, up_to_item_id=up_to_item_id, limit=app_settings.HISTORY_LIMIT
        )

    async def _send_history_frame(self, history: records.History, active_run: Any) -> None:
        items = wire.display_items(history.items, history.created_at)
        await self.send_json({"type": "history", "items": items, "active_run": active_run})

    async def agent_snapshot(self, message: dict[str, Any]) -> None:
        if self._buffer is None:
            return  # late answer after the timeout, or to an earlier request
        snapshot = message["snapshot"]
        history = await self._load_history(up_to_item_id=snapshot.pop("history_item_id"))
        self._sequencer.expect(snapshot["run_id"], snapshot["seq"] + 1)
        await self._send_history_frame(history, snapshot)
        await self._flush_buffer()

    async def _catchup_timeout(self) -> None:
        await asyncio.sleep(CATCHUP_TIMEOUT)
        await self.channel_layer.send(self.channel_name, {"type": "agent.catchup_timeout"})

    async def agent_catchup_timeout(self, message: dict[str, Any]) -> None:
        if self._buffer is None:
            return
        # The run did not answer: it ended meanwhile, or its worker is gone.
        history = await self._load_history(up_to_item_id=None)
        active = None if history.active_run_id is None else {"run_id": history.active_run_id}
        if active is None:
            self._buffer = []  # all of it is in the history just read
        await self._send_history_frame(history, active)
        await self._flush_buffer()

    async def _flush_buffer(self) -> None:
        buffered, self._buffer = self._buffer or [], None
        for event in buffered:
            await self._relay(event)

    # Messages from runs, through the channel layer --------------------------------

    async def agent_event(self, message: dict[str, Any]) -> None:
        event = message["event"]
        if self._buffer is not None:
            if len(self._buffer) < _MAX_BUFFERED:
                self._buffer.append(event)
            return
        await self._relay(event)

    async def _relay(self, event: dict[str, Any]) -> None:
        for ready in self._sequencer.push(event):
            await self.send_json(ready)
        run_id = str(event.get("run_id", ""))
        if self._sequencer.has_gap(run_id) and run_id not in self._gap_timers:
            self._gap_timers[run_id] = asyncio.create_task(self._close_gap(run_id))

    async def _close_gap(self, run_id: str) -> None:
        """An event is late or lost: wait a little for it, then go on without it."""
        await asyncio.sleep(GAP_TIMEOUT)
        del self._gap_timers[run_id]
        for ready in self._sequencer.give_up_gap(run_id):
            await self.send_json(ready)

    async def agent_presence(self, message: dict[str, Any]) -> None:
        await self.channel_layer.send(message["reply_to"], {"type": "agent.here"})
