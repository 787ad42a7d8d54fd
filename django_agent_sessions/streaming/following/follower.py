"""Following one conversation for one tab, whichever transport carries the tab.

A ``Follower`` is what a websocket consumer and an HTTP event stream have in common:

- ``open()``: find the conversation, or wait for its creation on a new id; join its
  groups; send the ``history`` frame (or a catch-up on the run in flight);
- ``handle(message)``: one dispatch by name for everything the channel layer (or this
  process's runs, through the inbox) brings: a run's events, snapshots, the timers of
  catch-up, gaps, silence and expiry, presence questions, a conversation's creation;
- ``close()``: leave the groups, stop the timers.

A transport gives it a way to write events (``send``) and an inbox (``SocketIO``), and
reads its own client's frames; it never follows a run itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from django_agent_sessions.conf import app_settings
from django_agent_sessions.streaming.delivery import groups, layer
from django_agent_sessions.streaming.delivery.groups import Groups
from django_agent_sessions.streaming.delivery.socket_io import SocketIO
from django_agent_sessions.streaming.following import history
from django_agent_sessions.streaming.following.relay import Relay
from django_agent_sessions.streaming.following.temporary import Presence
from django_agent_sessions.streaming.following.watch import later
from django_agent_sessions.streaming.running import drain, lifecycle, lost
from django_agent_sessions.streaming.visiting.visitor import Visitor

logger = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], Awaitable[None]]


class Follower:
    """One tab's view of one conversation (see the module)."""

    def __init__(
        self,
        visitor: Visitor,
        *,
        channel_name: str,
        io: SocketIO,
        send: Send,
        restart: drain.Restart,
    ) -> None:
        self.visitor = visitor
        self._restart = restart  # sends the tab to another worker (``drain``)
        self.channel_layer = visitor.channel_layer
        self.channel_name = channel_name
        self.io = io
        self._send = send
        self.membership = Groups(self, io)
        self.relay = Relay(self)
        self.presence = Presence()  # its count in a temporary chat (``temporary``)
        self._opened = False
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {
            "agent.event": self._on_event,
            "agent.snapshot": self._on_snapshot,
            "agent.catchup_timeout": self._on_catchup_timeout,
            "agent.check": self._on_check,
            "agent.expire": self._on_expire,
            "agent.presence": self._on_presence,
            "agent.resync": self._on_event,  # (held as events are while resuming)
            "agent.created": self._on_created,
            "agent.replayed": self._on_replayed,
            "agent.replay_timeout": self._on_replay_timeout,
        }
        self._resuming: tuple[str, int] | None = None  # (run_id, seq) the tab had
        # What comes live while the replay is asked for: sent after ``resumed``.
        self._held: list[dict[str, Any]] = []

    @property
    def user(self) -> Any:
        return self.visitor.user

    @property
    def conversation_pk(self) -> int | None:
        return self.visitor.conversation_pk

    async def send_json(self, content: Any) -> None:
        await self._send(content)

    def wake(self, message: dict[str, Any]) -> None:
        """A timer's message, into this tab's own inbox (works while the layer is down)."""
        self.io.deliver_local(message)

    async def open(self, resume: tuple[str, int] | None = None, *, look_again: bool = True) -> None:
        """Join the conversation and send its state; on a new id, wait for its creation.
        ``resume``: the ``(run_id, seq)`` the tab showed last (``replay``); ``look_again``:
        see ``Groups.wait_for_creation`` (False: the tab's own message comes next).

        Raises ``SessionOwnershipError`` when someone else created the id meanwhile.
        """
        lost.sweeper.acquire(self.channel_layer)
        self._opened = True
        if drain.draining():
            return await self._restart()  # this worker stops: another one serves the tab
        drain.serving(self, self._restart)
        conversation_pk, temporary = self.visitor.conversation_pk, self.visitor.temporary
        if conversation_pk is None:
            conversation_pk = await self.membership.wait_for_creation(
                self.visitor.session_id, self.visitor.owner_id, look_again=look_again
            )
            temporary = True  # (created meanwhile: maybe; the store counts it if so)
        if conversation_pk is None:
            await history.send_empty_frame(self.send_json)
            return
        await self.join(conversation_pk)
        if temporary:
            self.presence.opened(conversation_pk)
        if resume is None or not await self._resume(*resume):
            await self.relay.send_history()

    async def join(self, conversation_pk: int) -> None:
        self.visitor.conversation_pk = conversation_pk
        await self.membership.join(conversation_pk)

    async def handle(self, message: dict[str, Any]) -> None:
        """A message for this tab, by its ``type``; unknown types are ignored."""
        handler = self._handlers.get(str(message.get("type")))
        if handler is None:
            logger.debug("A follower ignored a %r message.", message.get("type"))
            return
        await handler(message)

    async def close(self, *, tell_the_run: bool) -> None:
        """Leave every group; ``tell_the_run``: the run may then ask who still watches
        (a socket that leaves; a stream's end tells nobody, the browser reconnects)."""
        self.relay.stop()
        self.io.gone = True
        drain.gone(self)
        if not self._opened:
            self.io.close()
            return
        self._opened = False
        lost.sweeper.release()
        try:
            await self.membership.leave(tell_the_run=tell_the_run)
        finally:
            self.io.close()
            await self.presence.closed()  # the last page out of a temporary chat

    # What the layer brings ---------------------------------------------------------

    async def _resume(self, run_id: str, seq: int) -> bool:
        """Ask the run for the events after ``seq``; False if it is not running."""
        conversation_pk = self.visitor.conversation_pk or 0
        status, _seq = await history.run_progress(conversation_pk, run_id) or ("", 0)
        if status != "running":  # over, waiting, unknown, or another conversation's
            return False
        self._resuming = (run_id, seq)
        # ``resumed`` is the tab's first frame: what comes live meanwhile is held (``_on_event``)
        # and relayed after the replayed events, which the sequencer starts at ``seq + 1``.
        self.relay.sequencer.expect(run_id, seq + 1)
        self.relay.watch.following(run_id)
        timeout = float(app_settings.CATCHUP_TIMEOUT_SECONDS)
        later(timeout, self.wake, {"type": "agent.replay_timeout"})
        ask = {"type": "agent.replay", "reply_to": self.channel_name, "after": seq}
        try:
            group = groups.control_group_name(conversation_pk)
            await layer.retrying(self.channel_layer.group_send, group, ask)
        except Exception:
            logger.warning("Could not ask a run for the events a tab missed.")
        return True

    async def _on_event(self, message: dict[str, Any]) -> None:
        """A run's event (or a resync): held while the replay is asked for, so that
        nothing reaches the tab before ``resumed``; relayed otherwise."""
        if self._resuming is not None:
            self._held.append(message)
        elif message.get("type") == "agent.resync":
            await self._on_resync(message)
        else:
            await self.relay.on_event(message)

    async def _on_replayed(self, message: dict[str, Any]) -> None:
        resuming, self._resuming = self._resuming, None
        events = message.get("events")
        if resuming is None or message.get("run_id") != resuming[0] or events is None:
            if resuming is not None:
                await self.relay.send_history()
                await self._release_held()
            return
        run_id, seq = resuming
        await self.send_json({"type": "resumed", "run_id": run_id, "seq": seq})
        for event in events:
            await self.relay.on_event({"type": "agent.event", "event": event})
        await self._release_held()  # (the sequencer drops what the replay had too)

    async def _on_replay_timeout(self, message: dict[str, Any]) -> None:
        if self._resuming is not None:
            self._resuming = None
            await self.relay.send_history()
            await self._release_held()

    async def _release_held(self) -> None:
        held, self._held = self._held, []
        for message in held:
            await self._on_event(message)

    async def _on_snapshot(self, message: dict[str, Any]) -> None:
        await self.relay.on_snapshot(message["snapshot"])

    async def _on_catchup_timeout(self, message: dict[str, Any]) -> None:
        round_ = message.get("round")
        await self.relay.on_catchup_timeout(round_ if isinstance(round_, int) else None)

    async def _on_check(self, message: dict[str, Any]) -> None:
        if self._resuming is not None:
            # The replay asked for (or its timeout) comes first, ``resumed`` or history;
            # the check is made again after it.
            run_id = str(message.get("run_id"))
            if message.get("gap"):
                self.relay.watch.gap_checked(run_id)
                self.relay.watch.gap(run_id)
            else:
                self.relay.watch.restart_silence()
            return
        await self.relay.on_check(message)

    async def _on_expire(self, message: dict[str, Any]) -> None:
        """The waiting run this tab shows is past its expiry: end it (every tab showing
        it does; the database lets one of them end it), so the page sees it end."""
        self.relay.watch.expiry_over()
        if self.conversation_pk is not None:
            await lifecycle.expire_overdue(self.channel_layer, self.conversation_pk, self.user)

    async def _on_presence(self, message: dict[str, Any]) -> None:
        await layer.retrying(self.channel_layer.send, message["reply_to"], {"type": "agent.here"})

    async def _on_resync(self, message: dict[str, Any]) -> None:
        if self.membership.conversation_pk is not None:
            await self.relay.resync()  # the layer lost messages (it was down)

    async def _on_created(self, message: dict[str, Any]) -> None:
        """A first message created this tab's conversation (the visitor's, on its id)."""
        if self.membership.conversation_pk is not None:
            return  # joined already (the layer's copy of a creation told directly)
        await self.join(int(message["conversation_pk"]))
        if message.get("temporary"):
            self.visitor.temporary = True
            self.presence.opened(int(message["conversation_pk"]))
        if not groups.joined_from_start(message):
            # The first run may have started in another worker before this tab joined
            # (its events then go through the layer only once a tab follows it): a
            # catch-up shows it from its beginning. Before it starts, there is nothing.
            await self.relay.send_history(unless_empty=True)
