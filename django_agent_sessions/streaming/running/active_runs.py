"""Active runs: a ``StreamedRun`` as an asyncio task, published to the session's sockets.

No websocket code and no decisions about a run's life (``lifecycle`` makes those: it
starts the task, and pauses or ends the run when the stream is over). A run publishes
its wire events to every socket watching the conversation, in any worker process:
directly to those of its own process, and through the conversation's channel-layer group
to the others (``fanout``). The run itself listens on a second, "control" group of the
conversation for:

- ``agent.cancel``: a socket asked to stop the run (from any process);
- ``agent.catchup``: a socket joined mid-run and wants a snapshot (``agent.snapshot``);
  one of another process makes the run publish every later event in the group;
- ``agent.replay``: a tab that reconnected wants the events after its ``seq``
  (``replay``; answered ``agent.replayed``);
- ``agent.left``: a socket left; unless runs continue after the last socket is gone,
  the run asks the event group who is still there (``agent.presence``) and cancels
  itself if nobody answers (``agent.here``) within ``PRESENCE_TIMEOUT_SECONDS``.

Group names (``groups``) are derived from the conversation's primary key, never from
the id the client sent.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from agents import Agent

from django_agent_sessions.conf import app_settings
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.streaming.delivery import fanout, layer
from django_agent_sessions.streaming.delivery.groups import control_group_name, group_name
from django_agent_sessions.streaming.delivery.replay import EventLog
from django_agent_sessions.streaming.running.outcomes import FAILED
from django_agent_sessions.streaming.running.streamed_run import StreamedRun
from django_agent_sessions.streaming.wire.text import valid_unicode

logger = logging.getLogger(__name__)

TERMINAL_EVENTS = frozenset({"run.completed", "run.cancelled", "run.failed"})
# Events that go through the channel layer even when no other worker follows the run:
# its start (another worker's socket then asks to follow), its end and its requests.
_ANNOUNCED = TERMINAL_EVENTS | {"run.started", "approval.requested"}

# Runs of this process, by conversation primary key.
_local_runs: dict[int, ActiveRun] = {}


def local_run(session_pk: int) -> ActiveRun | None:
    return _local_runs.get(session_pk)


def local_runs() -> list[ActiveRun]:
    """The runs of this process (running; a waiting run has no task)."""
    return list(_local_runs.values())


@dataclass(frozen=True)
class RunRequest:
    """What a socket asks for: this agent, answering ``text``, in this conversation."""

    agent: Agent[Any]
    text: str
    session: Any  # the run's DjangoSession
    context: Any  # what tools receive as ctx.context
    conversation_pk: int
    session_id: str  # the stored conversation id, for signal receivers
    user: Any
    client_id: str = ""  # the client's id for its user_message, echoed on the wire
    parts: tuple[dict[str, Any], ...] = ()  # the message's files, as the SDK's input parts
    files: tuple[dict[str, Any], ...] = ()  # ... and as the chat shows them
    detached: bool = False  # goes on without a tab (started from code or a schedule)


class ActiveRun:
    """One running ``StreamedRun``, its record, heartbeat and control channel."""

    def __init__(
        self,
        streamed: StreamedRun,
        started: store_runs.StartedRun,
        *,
        session_pk: int,
        channel_layer: Any,
        user: Any,
    ) -> None:
        self.streamed = streamed
        self.started = started
        self.session_pk = session_pk
        self.layer = channel_layer
        self.user = user
        self.group = group_name(session_pk)
        self.task: asyncio.Task[None] | None = None
        self._channel = ""
        self._helpers: list[asyncio.Task[None]] = []
        self._presence_round = 0
        self._someone_here = False
        # Whether a socket of another worker watches: then every event goes through the
        # layer, not only _ANNOUNCED (a run host's run, without sockets: from the start).
        self._followed = fanout.apart_here()
        # Stopped because its worker's drain time ran out (see ``drain``).
        self.interrupted = False
        self.detached = False  # no tab started it: it goes on when the last tab leaves
        self.log = EventLog()  # what it published, for tabs that resume (``replay``)
        self.answered = asyncio.Event()  # its first text is out, or it left (``titling``)

    @property
    def run_id(self) -> str:
        return self.started.run_id

    @property
    def followed(self) -> bool:
        """Whether a socket of another worker follows the run's every event."""
        return self._followed

    async def join(self) -> None:
        """Listen for control messages and keep the lease; from now on a ``cancel``
        reaches the run, even before its task starts."""
        self._channel = await layer.own_channel(self.layer, "agent_sessions.run.")
        await layer.retrying(
            self.layer.group_add, control_group_name(self.session_pk), self._channel
        )
        _local_runs[self.session_pk] = self
        self._helpers = [
            asyncio.create_task(self._listen()),
            asyncio.create_task(self._keep_lease()),
        ]

    async def leave(self) -> None:
        """Stop listening and renewing: the run's end is recorded, or it waits."""
        self.answered.set()
        for helper in self._helpers:
            helper.cancel()
        if _local_runs.get(self.session_pk) is self:
            del _local_runs[self.session_pk]
        await layer.retrying(
            self.layer.group_discard, control_group_name(self.session_pk), self._channel
        )

    def cancel(self) -> None:
        self.streamed.cancel()

    def interrupt(self) -> None:
        """Stop the run because its worker stops: it ends ``interrupted``."""
        self.interrupted = True
        self.streamed.cancel()

    def snapshot(self) -> dict[str, Any]:
        """Where the run stands for a tab that catches up. Its ``seq`` is that of the last
        event published: the end is numbered before its record is written and published
        after, and a tab told of it meanwhile would drop it as already shown."""
        snapshot = self.streamed.snapshot()
        published = self.log.last_seq
        if published is not None:
            snapshot["seq"] = published
        return {**snapshot, "history_item_id": self.started.history_item_id}

    async def stream(self) -> dict[str, Any] | None:
        """Publish the run's events as they come; its terminal event, or None when it
        stopped without one (it waits for approvals, was cancelled, or streaming failed)."""
        terminal: dict[str, Any] | None = None
        stream = self.streamed.events()
        try:
            async for event in stream:
                if event["type"] in TERMINAL_EVENTS:
                    terminal = event
                else:
                    # run.started twice, as the end: a socket of another worker that
                    # misses it would not follow the run (sockets drop the copy by seq).
                    await self.publish(event, copies=2 if event["type"] == "run.started" else 1)
        except Exception:
            # (The channel layer's failures never get here: ``fanout.broadcast`` keeps
            # the run going through them.)
            logger.exception("Streaming run %s failed; the run was stopped.", self.run_id)
            self.streamed.outcome.status = FAILED
            self.streamed.outcome.error = "Streaming the run failed."
        finally:
            # Stops the SDK run if it is still going (this task was cancelled, e.g. at
            # worker shutdown, or streaming failed) and lets its last write settle.
            await stream.aclose()
        return terminal

    async def publish(self, event: dict[str, Any], *, copies: int = 1) -> None:
        """To this process's sockets directly, and through the layer what other workers
        need: every event once one of their sockets follows the run (see ``fanout``)."""
        self.log.add(event)
        if event["type"] == "text.delta":
            self.answered.set()
        if self._followed or event["type"] in _ANNOUNCED:
            await fanout.broadcast(
                self.layer,
                self.group,
                self.session_pk,
                event,
                followed=self._followed,
                copies=copies,
            )
            return
        fanout.deliver(self.session_pk, {"type": "agent.event", "event": valid_unicode(event)})
        # Handing over awaits nothing, where publishing through the layer did: one
        # turn of the event loop per event keeps a run whose model outpaces the
        # relay from running long stretches between the worker's other tasks.
        await asyncio.sleep(0)

    async def _listen(self) -> None:
        while True:
            try:
                await self._handle(await self.layer.receive(self._channel))
            except Exception:
                # A channel layer hiccup must not leave the run deaf to "cancel": wait,
                # then join the control group again (a restarted Redis forgot it).
                logger.warning("Run %s could not read its control channel.", self.run_id)
                await asyncio.sleep(1)
                await self._rejoin_control()

    async def _rejoin_control(self) -> None:
        try:
            await self.layer.group_add(control_group_name(self.session_pk), self._channel)
        except Exception:
            logger.debug("The channel layer is still unavailable.")

    async def _handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "agent.cancel" and message.get("run_id") in (None, self.run_id):
            self.cancel()
        elif kind == "agent.catchup" and isinstance(message.get("reply_to"), str):
            if not fanout.is_local(message["reply_to"]):
                # A socket of another worker: every event after this snapshot goes
                # through the layer (set before the snapshot is taken, with no await).
                self._followed = True
            await layer.retrying(
                self.layer.send,
                message["reply_to"],
                {"type": "agent.snapshot", "snapshot": valid_unicode(self.snapshot())},
            )
        elif kind == "agent.replay" and isinstance(message.get("reply_to"), str):
            await self._replay(message["reply_to"], message.get("after"))
        elif kind == "agent.left" and not (
            app_settings.CONTINUE_RUNS_AFTER_DISCONNECT or self.detached
        ):
            await self._ask_who_is_here()
        elif kind == "agent.here":
            self._someone_here = True

    async def _replay(self, reply_to: str, after: Any) -> None:
        """The events after ``after`` for a tab that resumes (``replay``)."""
        if not fanout.is_local(reply_to):
            self._followed = True  # (as for a catch-up: before the answer, no await)
        events = self.log.after(after) if isinstance(after, int) else None
        answer = {"type": "agent.replayed", "run_id": self.run_id, "events": events}
        await layer.retrying(self.layer.send, reply_to, valid_unicode(answer))

    async def _ask_who_is_here(self) -> None:
        self._presence_round += 1
        self._someone_here = False
        # Asked twice: channels_redis can lose a message to a process-local channel when
        # a receive is cancelled, as a leaving socket's is, and one lost question or
        # answer must not cancel a run that another tab is watching.
        for _attempt in range(2):
            await layer.retrying(
                self.layer.group_send,
                self.group,
                {"type": "agent.presence", "reply_to": self._channel},
            )
        asyncio.get_running_loop().call_later(
            float(app_settings.PRESENCE_TIMEOUT_SECONDS),
            self._cancel_if_alone,
            self._presence_round,
        )

    def _cancel_if_alone(self, presence_round: int) -> None:
        if presence_round == self._presence_round and not self._someone_here:
            logger.info("Run %s has no sockets left; cancelling it.", self.run_id)
            self.cancel()

    async def _keep_lease(self) -> None:
        lease = float(app_settings.RUN_LEASE_SECONDS)
        while True:
            await asyncio.sleep(lease / 3)
            spent = self.streamed.spending.take()
            try:
                still_ours = await store_runs.renew_lease(
                    self.started.pk, lease_seconds=lease, seq=self.streamed.seq, spent=spent
                )
            except Exception:
                self.streamed.spending.give_back(spent)  # written with the next renewal
                logger.exception("Could not renew the lease of run %s.", self.run_id)
                continue
            if not still_ours:
                logger.warning("Run %s was taken over by another worker; stopping.", self.run_id)
                self.cancel()
                return
