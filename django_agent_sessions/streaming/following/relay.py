"""Relaying a conversation to one tab: the history frame on connect, a running run's
catch-up, and the run's events, in order. A ``Follower`` owns one ``Relay`` and hands it
the layer's messages; the relay reads only the tab's public attributes and sends on it.

**Every tab sees the same sequence, whatever the number of workers**: ``run.started``,
the run's events, one terminal event. A socket of another worker than the run's gets
``run.started`` through the layer like any other; what the run published only in its
own process before this socket followed it arrives next as the same events
(``item.completed``, and the text so far as one ``text.delta``), rebuilt from the run's
snapshot. Only a socket that connects mid-run gets the run in its ``history`` frame
(``active_run``) instead of the run's earlier events, and a tab whose run's end the
layer lost gets it as the stored ``history`` (below).

A run waiting for approvals is in the history frame (``pending_approvals``); a socket
that shows it ends it when it expires (``watch``), a page opened later on connect.

A socket that connects mid-run asks the run where it is (``agent.catchup``) and holds
its events until the answer (``agent.snapshot``) or a timeout, so nothing is shown twice
or missed; ``ordering.Sequencer`` puts events back in order per run.

**Nothing a tab follows is lost** (``watch``): a gap not filled in ``GAP_TIMEOUT_SECONDS``
or a run silent for ``FOLLOW_CHECK_SECONDS`` makes the tab ask the run where it stands; a
run that does not answer (ended, or the layer is down) is read from the database, whose
record is the truth; a waiting run's record's last seq says what the tab missed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from django_agent_sessions.conf import app_settings
from django_agent_sessions.store.conversations import History
from django_agent_sessions.streaming.delivery import fanout, groups, layer
from django_agent_sessions.streaming.delivery.ordering import Sequencer
from django_agent_sessions.streaming.following import history
from django_agent_sessions.streaming.following.watch import Watch, later
from django_agent_sessions.streaming.running import active_runs, lifecycle
from django_agent_sessions.streaming.wire import encoding

logger = logging.getLogger(__name__)

CATCHUP_ATTEMPTS = 3
_MAX_BUFFERED = 1000  # events held during a catch-up


class Socket(Protocol):
    """What the relay reads of its tab (a ``Follower``)."""

    channel_layer: Any
    channel_name: str

    @property
    def conversation_pk(self) -> int | None: ...

    @property
    def user(self) -> Any: ...

    async def send_json(self, content: Any) -> None: ...

    def wake(self, message: dict[str, Any]) -> None: ...  # into its own inbox (timers)


class Relay:
    """History, catch-up and ordered relay of run events, for one socket."""

    def __init__(self, socket: Socket) -> None:
        self.socket = socket
        self.sequencer = Sequencer()
        self.watch = Watch(socket.wake)
        self._buffer: list[dict[str, Any]] | None = None  # while waiting for a snapshot
        self._catchup_timer: asyncio.TimerHandle | None = None
        self._catchup_attempts = 0
        self._catchup_round = 0  # which question a timeout is about
        self._awaiting_snapshot = False
        self._probing = False  # the snapshot asked for only checks that nothing was missed
        self._degraded: str | None = None  # a run the page was shown only the id of
        # A run of another worker (id, seq of its start) that started during a catch-up.
        self._to_follow: tuple[str, int] | None = None
        # A run of another worker whose start this socket sent: its catch-up is events.
        self._started_elsewhere: str | None = None

    def stop(self) -> None:
        self.watch.stop()
        if self._catchup_timer is not None:
            self._catchup_timer.cancel()

    @property
    def _pk(self) -> int:
        assert self.socket.conversation_pk is not None
        return self.socket.conversation_pk

    async def send_history(self, *, unless_empty: bool = False) -> None:
        """History, or a catch-up on the run in flight (``unless_empty``: not for nothing);
        a waiting run past its expiry ends first."""
        await lifecycle.expire_overdue(self.socket.channel_layer, self._pk, self.socket.user)
        stored = await history.load(self._pk, up_to_item_id=None)
        if stored.active_run_id is not None:
            return await self._catch_up()
        if stored.entries or not unless_empty:
            await self._send_history_frame(stored, None)

    async def _send_history_frame(self, stored: History, active_run: Any) -> None:
        calls = await history.send_frame(self.socket.send_json, self._pk, stored, active_run)
        degraded = active_run is not None and "text" not in active_run
        self._degraded = active_run["run_id"] if degraded else None
        for run in stored.runs:  # ends the frame shows: a late copy is not shown again
            if run.status not in ("running", "waiting"):
                self.watch.ended(run.run_id)
        for call in calls:  # the waiting run's next events continue its numbering
            self.sequencer.expect(call.run_id, call.seq + 1)
            self.watch.expires(call.expires_at)
        waiting = calls[0].run_id if calls else None
        self.watch.following(active_run["run_id"] if active_run else waiting, waits=not active_run)

    async def _catch_up(self) -> None:
        """A run is in flight (here or in another worker): ask it where it is, and hold
        its events until the answer (or the timeout) so nothing is shown twice."""
        self._buffer = []
        self._catchup_attempts = 0
        await self._ask_for_snapshot()

    async def _ask_for_snapshot(self) -> None:
        self._catchup_attempts += 1
        self._catchup_round += 1
        self._awaiting_snapshot = True
        if self._catchup_timer is not None:  # an earlier question's timeout is not this one's
            self._catchup_timer.cancel()
        # The timer first: with the layer down the question is lost; the timeout reads.
        timeout = float(app_settings.CATCHUP_TIMEOUT_SECONDS)
        timed_out = {"type": "agent.catchup_timeout", "round": self._catchup_round}
        self._catchup_timer = later(timeout, self.socket.wake, timed_out)
        try:
            await layer.retrying(
                self.socket.channel_layer.group_send,
                groups.control_group_name(self._pk),
                {"type": "agent.catchup", "reply_to": self.socket.channel_name},
            )
        except Exception:
            logger.warning("Could not ask a run where it stands; reading it stored instead.")

    async def on_snapshot(self, snapshot: dict[str, Any]) -> None:
        self._awaiting_snapshot = False
        probing, self._probing = self._probing, False
        run_id, seq = snapshot["run_id"], snapshot["seq"]
        if self._buffer is None and not self.sequencer.is_behind(run_id, seq):
            return  # a second answer, or one the socket no longer needs
        if self.watch.has_ended(run_id):  # a late answer: the tab has shown the run's end
            return await self._flush_buffer()
        if probing and not self.sequencer.is_behind(run_id, seq, holding=self._buffer or ()):
            self.watch.restart_silence()  # nothing was missed (it may be held meanwhile)
            return await self._flush_buffer()
        if run_id == self._started_elsewhere:
            self._started_elsewhere = None
            await self._send_missed_events(snapshot)
        else:
            await self._send_snapshot_frame(snapshot)
        self.sequencer.expect(run_id, seq + 1)
        for ready in self.sequencer.release(run_id):
            await self._show(ready)
        await self._flush_buffer()

    async def _send_snapshot_frame(self, snapshot: dict[str, Any]) -> None:
        """The history up to the run, and the run as the snapshot has it; the stored
        history alone if the run's end (or pause) was recorded since it was taken."""
        stored = await history.load(self._pk, up_to_item_id=snapshot["history_item_id"])
        if stored.active_run_id != snapshot["run_id"]:  # (its event, late, is not shown)
            stored = await history.load(self._pk, up_to_item_id=None)
            return await self._send_history_frame(stored, None)
        active_run = {key: snapshot[key] for key in ("run_id", "seq", "items", "text")}
        await self._send_history_frame(stored, active_run)

    async def _send_missed_events(self, snapshot: dict[str, Any]) -> None:
        """The events a run published before this tab followed it (``encoding.missed_events``)."""
        for event in encoding.missed_events(snapshot):
            if self.sequencer.is_behind(event["run_id"], event["seq"]):
                self.sequencer.expect(event["run_id"], event["seq"] + 1)
                await self._show(event)

    async def on_catchup_timeout(self, round_: int | None = None) -> None:
        """The run did not answer catch-up ``round_`` (an earlier round's is ignored): it
        ended, its worker is gone or busy, or the layer lost a message. Ended: the stored
        history is the page's state. Still going: a page that shows the run keeps it
        (the stored history has none of its text) and asks again, holding its events; a
        new page gets the stored history now and asks again."""
        if not self._awaiting_snapshot or round_ not in (None, self._catchup_round):
            return
        self._awaiting_snapshot = False
        stored = await history.load(self._pk, up_to_item_id=None)
        active = None if stored.active_run_id is None else {"run_id": stored.active_run_id}
        retry = active is not None and self._catchup_attempts < CATCHUP_ATTEMPTS
        if active is not None and self._shows(active["run_id"]):
            if retry:
                return await self._ask_for_snapshot()
            self._probing = False
            return await self._flush_buffer()
        self._probing = False
        if self._buffer is not None:
            if active is None:
                self._buffer = []  # all of it is in the history just read
            self._started_elsewhere = None
            await self._send_history_frame(stored, active)
            await self._flush_buffer()
        if retry:
            await self._ask_for_snapshot()

    def _shows(self, run_id: str) -> bool:
        """Whether the page shows the run as it stands (not only its id)."""
        return self.watch.live == run_id and self._degraded != run_id

    async def _flush_buffer(self) -> None:
        buffered, self._buffer = self._buffer or [], None
        follow, self._to_follow = self._to_follow, None
        for event in buffered:
            await self._relay(event)
        if follow is not None and self.sequencer.is_behind(*follow):
            await self._catch_up()  # it started while an earlier run was caught up on

    async def on_event(self, message: dict[str, Any]) -> None:
        if fanout.from_this_process(message):
            return  # the run handed it to this socket's inbox already
        event = message["event"]
        run_id = event.get("run_id")
        if fanout.asks_to_follow(message) and self.sequencer.is_behind(run_id, event["seq"]):
            # (not a copy of a start this socket has had; a resumed run starts again)
            return await self._follow(event)
        if self._buffer is None and fanout.missed_before(message, self.sequencer):
            # The end (or approvals) of another worker's run this socket never followed.
            self.sequencer.expect(run_id, event["seq"] + 1)
            return await self.send_history()
        if event.get("type") == "approval.requested":
            self.watch.expires(event.get("expires_at"))
        elif event.get("type") in active_runs.TERMINAL_EVENTS:
            self.watch.expiry_over()
            if self._probing:  # the run ended while the tab checked on it: that answers it
                self._probing = self._awaiting_snapshot = False
                await self._flush_buffer()
        if self._buffer is not None:
            # Past the cap only text is dropped (a gap check repairs it), never an end.
            if len(self._buffer) < _MAX_BUFFERED or event.get("type") != "text.delta":
                self._buffer.append(event)
            return
        await self._relay(event)

    async def _follow(self, start: dict[str, Any]) -> None:
        """A run of another worker, publishing its events only there: its start is sent
        as it is, then catching up makes it publish every later event through the layer
        (see ``fanout``) and brings what it published before as events."""
        run_id, seq = start["run_id"], start["seq"]
        if self._buffer is not None:
            self._to_follow = (run_id, seq)  # after the catch-up in progress
            return
        self.sequencer.expect(run_id, seq)
        await self._relay(start)
        self._started_elsewhere = run_id
        await self._catch_up()

    async def _relay(self, event: dict[str, Any]) -> None:
        for ready in self.sequencer.push(event):
            await self._show(ready)
        run_id = str(event.get("run_id", ""))
        if self.sequencer.has_gap(run_id):
            self.watch.gap(run_id)

    async def _show(self, event: dict[str, Any]) -> None:
        if self.watch.shown(event):
            await self.socket.send_json(event)

    # Recovering what the layer lost (see ``watch``) --------------------------------

    async def resync(self) -> None:
        """The layer may have lost messages (it was down): check what the tab shows."""
        live = self.watch.live
        if live is not None and not self.watch.waits and self._buffer is None:
            return await self.on_check({"run_id": live})
        await self.send_history()

    async def on_check(self, message: dict[str, Any]) -> None:
        """A gap stayed open, or a followed run was silent: did the tab miss anything?"""
        run_id = str(message.get("run_id"))
        if message.get("gap"):
            self.watch.gap_checked(run_id)
            if self.sequencer.has_gap(run_id) and self._buffer is None:
                await self._catch_up()  # shows where the run stands (or its outcome)
            return
        if run_id != self.watch.live or self._buffer is not None:
            return  # not followed any more, or a catch-up is under way
        if self.watch.waits:
            return await self._check_waiting(run_id)
        self._probing = True
        await self._catch_up()

    async def _check_waiting(self, run_id: str) -> None:
        """A waiting run has no task to ask: its record says if a decision or end was missed."""
        status, seq = await history.run_progress(self._pk, run_id) or ("", 0)
        if status == "waiting" and not self.sequencer.is_behind(run_id, seq):
            self.watch.restart_silence()
            return
        await self.send_history()
