"""One AG-UI run's response: the request's action, then its run as AG-UI events.

A ``RunStream`` is to an AG-UI request what ``sse.stream.EventStream`` is to a chat
page's stream: a ``streaming.Follower`` follows the conversation (joined before the
action, so nothing of the run is missed), fed by a ``SocketIO``; ``translation`` turns
the frames it writes into events, which the response's generator writes as AG-UI's
``EventEncoder`` encodes them. Unlike a page's stream, it ends with its run: at the
run's end, or when the run waits for tool approvals (``RUN_FINISHED`` with
interrupts), or with ``RUN_ERROR`` when the action was refused.

A client that goes away (AG-UI's ``abortRun()``) stops the run it asked for, as the
packaged chat's Stop does: cancelled with a valid history, unless
``CONTINUE_RUNS_AFTER_DISCONNECT``. One that only opened the thread and followed its run
leaves as a chat tab leaves: the run stops only if nobody else watches it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from ag_ui.core import BaseEvent, MessagesSnapshotEvent, RunErrorEvent, RunStartedEvent
from ag_ui.encoder import EventEncoder
from django.utils.translation import get_language, override
from django.utils.translation import gettext as _

from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.protocols.ag_ui import messages
from django_agent_sessions.protocols.ag_ui.inputs import Asked, Load, Resume, Send
from django_agent_sessions.protocols.ag_ui.translation import Translation, interrupt
from django_agent_sessions.sse.body import END, Body
from django_agent_sessions.sse.following import following
from django_agent_sessions.sse.views import detached
from django_agent_sessions.streaming import Visitor, actions, frames, history

logger = logging.getLogger(__name__)


class RunStream:
    """The AG-UI events of one request (see the module); the response's body."""

    def __init__(
        self, visitor: Visitor, channel_name: str, thread_id: str, run_id: str, asked: Asked
    ) -> None:
        self.visitor = visitor
        self.asked = asked
        self.translation = Translation(thread_id, run_id)
        self.encoder = EventEncoder()
        own = following(visitor, channel_name=channel_name, send=self._frame, restart=self._restart)
        self.channel_name, self.io, self.follower = own.channel_name, own.io, own.follower
        self._body = Body()
        self._history: dict[str, Any] | None = None  # the frame ``open()`` sent
        self._acted = False  # the action took effect: a run of ours is (or was) going
        self._paused_at: int | None = None  # the last seq of the run's approval requests
        self._action: asyncio.Future[None] | None = None  # the latest action's work
        self._language = get_language()  # the request's: its errors are in it

    def __aiter__(self) -> AsyncIterator[str]:
        return self._chunks()

    def close(self) -> None:
        """Django calls it once the response is over (possibly from another thread)."""
        self._body.close_soon(self._close)

    async def _chunks(self) -> AsyncIterator[str]:
        # The action's database work shares the follower's thread and connection.
        self._body.start(self._in_language())
        try:
            while (chunk := await self._body.out.get()) is not END:
                yield chunk
        finally:
            await self._close()

    def _emit(self, *events: BaseEvent) -> None:
        for event in events:
            self._body.put(self.encoder.encode(event))
        if self.translation.finished:
            self._body.end()

    async def _in_language(self) -> None:
        if self._language is None:
            return await self._follow()
        with override(self._language):
            await self._follow()

    async def _follow(self) -> None:
        t = self.translation
        self._emit(RunStartedEvent(thread_id=t.thread_id, run_id=t.run_id))
        try:
            await self.follower.open()
            while self._history is None and not isinstance(self.asked, Send):
                # A run in flight: the history frame follows the run's answer (its
                # snapshot), which the inbox brings.
                await self.follower.handle(await self.io.next_message())
            if await self._act():
                while not t.finished:
                    await self.follower.handle(await self.io.next_message())
        except asyncio.CancelledError:
            raise
        except frames.BadFrame as refused:  # the wire's error: the run's error here
            t.finished = True
            self._emit(RunErrorEvent(message=refused.message, code=refused.code))
        except SessionOwnershipError:  # someone else created the id since the request
            t.finished = True
            self._emit(
                RunErrorEvent(message=_("This conversation is not yours."), code="forbidden")
            )
        except Exception:
            logger.exception("An AG-UI run's stream failed; it ends.")
            t.finished = True
            message = _("The assistant is not available.")
            self._emit(RunErrorEvent(message=message, code="unavailable"))
        self._body.end()

    async def _act(self) -> bool:
        """The request's action; False when it leaves nothing to follow."""
        asked = self.asked
        if isinstance(asked, Send):
            content = {
                "text": asked.text,
                **({"client_id": asked.client_id} if asked.client_id else {}),
            }
            await self._through(actions.send_message(self.visitor, content))
        elif isinstance(asked, Resume):
            return await self._decide(asked)
        else:
            return self._load(asked)
        return True

    async def _through(self, work: Coroutine[Any, Any, None]) -> None:
        """An action, finished even when the client goes away meanwhile (``_close``
        waits for it, then stops what it started)."""
        self._action = asyncio.ensure_future(work)
        await asyncio.shield(self._action)
        self._acted = True

    async def _decide(self, asked: Resume) -> bool:
        """Each answer decides its call; the run resumes once none is left (then it is
        followed), else this AG-UI run ends again with the interrupts still open."""
        t = self.translation
        waiting = {c["call_id"]: c for c in (self._history or {}).get("pending_approvals", [])}
        decided = {decision.call_id for decision in asked.decisions}
        runs = {waiting[call_id]["run_id"] for call_id in decided & set(waiting)}
        if runs:  # one waiting run per conversation: the run the answers resume
            t.follow(str(runs.pop()))
        for decision in asked.decisions:
            content = {"call_id": decision.call_id, "approve": decision.approve}
            await self._through(
                actions.decide(self.visitor, {**content, "message": decision.message})
            )
        t.interrupts = [interrupt(call) for id_, call in waiting.items() if id_ not in decided]
        if t.interrupts:
            self._emit(*t.pause())
            return False
        return True

    def _load(self, asked: Load) -> bool:
        """The stored history; the run in flight followed, a waiting one's interrupts."""
        shown = self._history or {}
        active = shown.get("active_run") or {}
        items = [*shown.get("items", []), *active.get("items", [])]
        self._emit(MessagesSnapshotEvent(messages=messages.snapshot(items)))
        t = self.translation
        if active.get("run_id"):
            t.follow(str(active["run_id"]))
            if active.get("text"):  # what the message being written holds so far
                self._emit(*t.events({"type": "text.delta", **active, "delta": active["text"]}))
            return True
        t.interrupts = [interrupt(call) for call in shown.get("pending_approvals", [])]
        self._emit(*(t.pause() if t.interrupts else t.end({"type": "run.completed"})))
        return False

    async def _frame(self, frame: dict[str, Any]) -> None:
        """A frame the follower writes, as this request's events."""
        t, kind = self.translation, frame.get("type")
        if kind == "history":
            if self._history is None:
                self._history = frame
            elif t.ours is not None:
                self._recover(frame)
        elif kind == "run.started" and t.ours is None and self._acted:
            # The first run to start after the message: this request's (one run at a
            # time per conversation).
            if not frame.get("resumed"):
                t.follow(str(frame["run_id"]))
        elif kind == "approval.requested" and frame.get("run_id") == t.ours:
            t.events(frame)
            await self._maybe_paused(int(frame["seq"]))
        else:
            self._emit(*t.events(frame))

    async def _maybe_paused(self, seq: int) -> None:
        """All of a pause's requests are in (they are stored before they are sent: the
        record's last seq is the last request's): this AG-UI run ends with them."""
        if self._paused_at is None and self.translation.ours and self.visitor.conversation_pk:
            progress = await history.run_progress(
                self.visitor.conversation_pk, self.translation.ours
            )
            self._paused_at = progress[1] if progress and progress[0] == "waiting" else seq
        if seq >= (self._paused_at or seq):
            self._emit(*self.translation.pause())

    def _recover(self, shown: dict[str, Any]) -> None:
        """A ``history`` frame mid-run: the follower repaired what the layer lost. A run
        still going goes on (its completed items repair the text); one that is over
        ends here, as the record says."""
        t = self.translation
        active = shown.get("active_run") or {}
        if active.get("run_id") == t.ours:
            return
        notes = [i for i in shown.get("items", []) if i.get("run_id") == t.ours and i.get("status")]
        waiting = [c for c in shown.get("pending_approvals", []) if c.get("run_id") == t.ours]
        if waiting:
            t.interrupts = [interrupt(call) for call in waiting]
            self._emit(*t.pause())
        elif notes and notes[-1]["status"] == "failed":
            error = {
                "code": (notes[-1].get("error") or {}).get("code", "agent_error"),
                "message": "",
            }
            self._emit(*t.end({"type": "run.failed", "error": error}))
        else:
            self._emit(*t.end({"type": "run.cancelled" if notes else "run.completed"}))

    async def _restart(self) -> None:
        """This worker stops (a deploy). A run already followed ends within
        ``DRAIN_SECONDS`` and is followed to its end; nothing else starts here."""
        if self.translation.ours is None:
            self.translation.finished = True
            message = _("The server is restarting; send it again in a moment.")
            self._emit(RunErrorEvent(message=message, code="unavailable"))

    async def _close(self) -> None:
        if not self._body.closing():
            return
        t, action = self.translation, self._action
        try:
            if action is not None:
                await asyncio.wait([action])  # what the client asked is done first
            # A request that only opened the thread leaves its run as a chat tab does:
            # the run goes on if anyone else still watches it (or runs on by setting).
            watched = isinstance(self.asked, Load) and t.ours is not None and not t.finished
            await self.follower.close(tell_the_run=watched)
            acted = action is not None and not action.cancelled() and action.exception() is None
            if acted and not t.finished and not app_settings.CONTINUE_RUNS_AFTER_DISCONNECT:
                # The client went away mid-run: its Stop (``abortRun()``).
                run = {"run_id": t.ours} if t.ours else {}
                await detached(actions.cancel(self.visitor, run))
        except Exception:
            logger.warning("A closed AG-UI stream could not stop its run.", exc_info=True)
