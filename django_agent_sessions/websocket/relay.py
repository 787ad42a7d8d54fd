"""Relaying a conversation to one socket: the history frame on connect, a running run's
catch-up, and the run's events, in order. A mixin of ``AgentSessionConsumer``.
(Slightly longer than 300 lines: following runs of other workers is part of catching up.)

A run waiting for approvals is listed in the history frame (``pending_approvals``). While
a socket shows one, it ends the run when it expires (every socket of the conversation
does; the database lets one of them do it), so an open page sees the expiry without
anybody acting; a page opened later ends it on connect.

A socket that connects while a run is in flight (here or in another worker) asks the run
where it is (``agent.catchup``) and holds the run's events until the answer
(``agent.snapshot``) or a timeout, so nothing is shown twice and nothing is missed. A
socket of another worker than the run's does the same when the run starts (``fanout``).
Events are put back in order per run by ``ordering.Sequencer``; a gap that is not filled
within ``GAP_TIMEOUT_SECONDS`` is skipped (the completed item repairs lost text).
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.utils import timezone
from django.utils.translation import gettext as _

from django_agent_sessions.conf import app_settings
from django_agent_sessions.websocket import (
    approvals,
    fanout,
    layer,
    records,
    runs,
    waiting,
    wire,
)
from django_agent_sessions.websocket.ordering import Sequencer
from django_agent_sessions.websocket.protocol import PROTOCOL_VERSION  # in every history frame

CATCHUP_ATTEMPTS = 3
_MAX_BUFFERED = 1000
# A socket ends an expired waiting run this long after its expiry.
EXPIRY_MARGIN = 0.5


class RelayMixin:
    """History, catch-up and ordered relay of run events, for a websocket consumer."""

    conversation_pk: int | None
    channel_layer: Any
    channel_name: str
    _catchup_timer: asyncio.Task[None] | None = None
    _catchup_attempts = 0
    _awaiting_snapshot = False
    # A run of another worker (id, seq of its start) that started during a catch-up.
    _to_follow: tuple[str, int] | None = None
    _expiry_timer: asyncio.Task[None] | None = None

    if TYPE_CHECKING:  # provided by the consumer
        user: Any

        async def send_json(self, content: Any, close: bool = False) -> None: ...

    def start_relay(self) -> None:
        self._sequencer = Sequencer()
        self._gap_timers: dict[str, asyncio.Task[None]] = {}
        self._buffer: list[dict[str, Any]] | None = None  # while waiting for a snapshot

    def stop_relay(self) -> None:
        timers = [
            self._catchup_timer,
            self._expiry_timer,
            *getattr(self, "_gap_timers", {}).values(),
        ]
        for timer in timers:
            if timer is not None:
                timer.cancel()

    async def send_history(self, *, unless_empty: bool = False) -> None:
        """The history frame, or a catch-up on the run in flight.

        ``unless_empty``: nothing when the conversation has no items and no run yet.
        """
        assert self.conversation_pk is not None
        await self.expire_overdue()
        history = await self._load_history(up_to_item_id=None)
        if history.active_run_id is not None:
            return await self._catch_up()
        if history.entries or not unless_empty:
            await self._send_history_frame(history, None)

    async def _catch_up(self) -> None:
        """A run is in flight (here or in another worker): ask it where it is, and hold
        its events until the answer (or the timeout) so nothing is shown twice."""
        self._buffer = []
        self._catchup_attempts = 0
        await self._ask_for_snapshot()

    async def _ask_for_snapshot(self) -> None:
        assert self.conversation_pk is not None
        self._catchup_attempts += 1
        self._awaiting_snapshot = True
        await layer.retrying(
            self.channel_layer.group_send,
            runs.control_group_name(self.conversation_pk),
            {"type": "agent.catchup", "reply_to": self.channel_name},
        )
        self._catchup_timer = asyncio.create_task(self._catchup_timeout())

    async def _load_history(
        self, up_to_item_id: int | None, before_id: int | None = None
    ) -> records.History:
        assert self.conversation_pk is not None
        return await records.read_history(
            self.conversation_pk,
            up_to_item_id=up_to_item_id,
            limit=app_settings.HISTORY_LIMIT,
            max_chars=app_settings.HISTORY_MAX_BYTES,
            before_id=before_id,
        )

    def _history_fields(self, history: records.History) -> dict[str, Any]:
        """The items of a history frame or page, within ``HISTORY_MAX_BYTES``: the query
        bounded the stored JSON's characters, this bounds the frame's bytes."""
        items = wire.history_items(history.entries, history.runs)
        has_more = history.has_more
        budget = app_settings.HISTORY_MAX_BYTES
        if budget is not None:
            sizes = [wire.frame_size(item) + 1 for item in items]
            total = sum(sizes)
            while len(items) > 1 and total > budget:
                total -= sizes.pop(0)
                items.pop(0)
                has_more = True
        oldest = next((item["id"] for item in items if item.get("id") is not None), None)
        return {"items": items, "has_more": has_more, "oldest_id": oldest}

    async def _send_history_frame(self, history: records.History, active_run: Any) -> None:
        assert self.conversation_pk is not None
        pending = await approvals.pending_approvals(self.conversation_pk)
        for call in pending:
            # The waiting run's next events continue its numbering.
            self._sequencer.expect(call.run_id, call.seq + 1)
            self._watch_expiry(call.expires_at)
        await self.send_json(
            _history_frame(
                self._history_fields(history),
                last_item_id=history.entries[-1].id if history.entries else None,
                active_run=active_run,
                pending_approvals=[call.wire() for call in pending],
            )
        )

    async def send_empty_history(self) -> None:
        """The history frame of a conversation that does not exist yet."""
        fields = {"items": [], "has_more": False, "oldest_id": None}
        await self.send_json(
            _history_frame(fields, last_item_id=None, active_run=None, pending_approvals=[])
        )

    async def send_older(self, before: Any) -> None:
        """A ``history.page`` of the items older than the item id ``before``."""
        if isinstance(before, bool) or not isinstance(before, int) or before < 1:
            await self.send_json(
                {
                    "type": "error",
                    "code": "invalid_frame",
                    "message": _("before must be an item id."),
                }
            )
            return
        if self.conversation_pk is None:  # not created yet: nothing is older
            page = {"items": [], "has_more": False, "oldest_id": None}
            await self.send_json({"type": "history.page", "before": before, **page})
            return
        history = await self._load_history(up_to_item_id=None, before_id=before)
        await self.send_json(
            {"type": "history.page", "before": before, **self._history_fields(history)}
        )

    async def agent_snapshot(self, message: dict[str, Any]) -> None:
        snapshot = message["snapshot"]
        self._awaiting_snapshot = False
        if self._buffer is None and not self._sequencer.is_behind(
            snapshot["run_id"], snapshot["seq"]
        ):
            return  # a second answer, or one the socket no longer needs
        history = await self._load_history(up_to_item_id=snapshot.pop("history_item_id"))
        self._sequencer.expect(snapshot["run_id"], snapshot["seq"] + 1)
        await self._send_history_frame(history, snapshot)
        await self._flush_buffer()

    async def _catchup_timeout(self) -> None:
        await asyncio.sleep(float(app_settings.CATCHUP_TIMEOUT_SECONDS))
        await layer.retrying(
            self.channel_layer.send, self.channel_name, {"type": "agent.catchup_timeout"}
        )

    async def agent_catchup_timeout(self, message: dict[str, Any]) -> None:
        if not self._awaiting_snapshot:
            return
        # The run did not answer: it ended meanwhile, its worker is gone or busy, or a
        # message was lost. The page gets the history now; while the run is still going
        # it is asked again, and a late answer still brings the page up to date (a run
        # of another worker is followed only once it answers).
        history = await self._load_history(up_to_item_id=None)
        active = None if history.active_run_id is None else {"run_id": history.active_run_id}
        if self._buffer is not None:
            if active is None:
                self._buffer = []  # all of it is in the history just read
            await self._send_history_frame(history, active)
            await self._flush_buffer()
        self._awaiting_snapshot = False
        if active is not None and self._catchup_attempts < CATCHUP_ATTEMPTS:
            await self._ask_for_snapshot()

    async def _flush_buffer(self) -> None:
        buffered, self._buffer = self._buffer or [], None
        follow, self._to_follow = self._to_follow, None
        for event in buffered:
            await self._relay(event)
        if follow is not None and self._sequencer.is_behind(*follow):
            await self._follow(*follow)  # it started while an earlier run was caught up on

    def _missed_before(self, message: dict[str, Any]) -> bool:
        event = message["event"]
        return (
            message.get("followed") is False
            and isinstance(event.get("seq"), int)
            and self._sequencer.is_behind(str(event["run_id"]), event["seq"] - 1)
        )

    async def _follow(self, run_id: str, start_seq: int) -> None:
        """A run of another worker, publishing its events only there: catching up makes it
        publish every later one through the layer (see ``fanout``)."""
        if self._buffer is not None:
            self._to_follow = (run_id, start_seq)  # after the catch-up in progress
            return
        await self._catch_up()

    # Messages from runs, through the channel layer --------------------------------

    async def agent_event(self, message: dict[str, Any]) -> None:
        if fanout.from_this_process(message):
            return  # the run handed it to this socket's inbox already
        event = message["event"]
        if fanout.asks_to_follow(message) and self._sequencer.is_behind(
            event["run_id"], event["seq"]
        ):  # (not a copy of a start this socket has had; a resumed run starts again)
            await self._follow(event["run_id"], event["seq"])
        elif self._buffer is None and self._missed_before(message):
            # The end (or the approval requests) of a run of another worker that this
            # socket never managed to follow: what the run stored is the page's state.
            self._sequencer.expect(event["run_id"], event["seq"] + 1)
            return await self.send_history()
        if event.get("type") == "approval.requested":
            self._watch_expiry(event.get("expires_at"))
        elif event.get("type") in runs.TERMINAL_EVENTS and self._expiry_timer is not None:
            self._expiry_timer.cancel()
            self._expiry_timer = None
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
        await asyncio.sleep(float(app_settings.GAP_TIMEOUT_SECONDS))
        del self._gap_timers[run_id]
        for ready in self._sequencer.give_up_gap(run_id):
            await self.send_json(ready)

    # Expiry of a run waiting for approvals -----------------------------------------

    async def expire_overdue(self) -> None:
        """End the conversation's waiting run if it is past its expiry."""
        assert self.conversation_pk is not None
        if await approvals.overdue(self.conversation_pk):
            await waiting.end_waiting_run(
                self.conversation_pk,
                reason=approvals.EXPIRED,
                channel_layer=self.channel_layer,
                user=self.user,
                only_overdue=True,
            )

    def _watch_expiry(self, expires_at: Any) -> None:
        if not isinstance(expires_at, str) or self._expiry_timer is not None:
            return
        try:
            when = datetime.fromisoformat(expires_at)
        except ValueError:
            return
        delay = max(0.0, (when - timezone.now()).total_seconds()) + EXPIRY_MARGIN
        self._expiry_timer = asyncio.create_task(self._expire_later(delay))

    async def _expire_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        await layer.retrying(self.channel_layer.send, self.channel_name, {"type": "agent.expire"})

    async def agent_expire(self, message: dict[str, Any]) -> None:
        self._expiry_timer = None
        await self.expire_overdue()

    async def agent_presence(self, message: dict[str, Any]) -> None:
        await layer.retrying(self.channel_layer.send, message["reply_to"], {"type": "agent.here"})


def _history_frame(
    fields: dict[str, Any],
    *,
    last_item_id: int | None,
    active_run: Any,
    pending_approvals: list[dict[str, Any]],
) -> dict[str, Any]:
    """The ``history`` frame: ``fields`` are its items, ``has_more`` and ``oldest_id``."""
    return {
        "type": "history",
        "protocol": PROTOCOL_VERSION,
        **fields,
        "last_item_id": last_item_id,
        "active_run": active_run,
        "pending_approvals": pending_approvals,
    }
