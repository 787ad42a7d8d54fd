"""One response of the AI SDK adapter: a run's events as UI message stream chunks.

A ``ChatStream`` is to a ``useChat`` request what ``sse.stream.EventStream`` is to the
packaged chat's ``EventSource``: a ``streaming.Follower`` follows the conversation, fed
by a ``SocketIO``, and its frames are written as the response goes. The differences
are the protocol's: the response follows one run (the one the request started or
resumed, or, for a resume, the one in flight) and ends with it, ``data: [DONE]`` last;
and its end before the run's is a Stop (``useChat``'s ``stop()`` aborts the fetch), so
the run is cancelled then, unless ``CONTINUE_RUNS_AFTER_DISCONNECT``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from django_agent_sessions.conf import app_settings
from django_agent_sessions.protocols.ai_sdk.parts import Chunk, PartWriter
from django_agent_sessions.sse.body import END, Body, leave
from django_agent_sessions.sse.following import following
from django_agent_sessions.sse.views import detached
from django_agent_sessions.streaming import Visitor, actions, history

logger = logging.getLogger(__name__)

DONE = "data: [DONE]\n\n"


def chunk_text(chunk: Chunk) -> str:
    # ASCII JSON: a lone surrogate a model wrote stays valid text on the way out.
    return f"data: {json.dumps(chunk, ensure_ascii=True, separators=(',', ':'))}\n\n"


class ChatStream:
    """The chunks of one run for one request (see the module). ``resume``: follow the
    run in flight from its beginning (its catch-up first), else the next run that
    starts once ``act()`` has taken the request."""

    def __init__(
        self, visitor: Visitor, channel_name: str, writer: PartWriter, *, resume: bool = False
    ) -> None:
        self.visitor = visitor
        self.writer = writer
        self.resume = resume
        own = following(
            visitor, channel_name=channel_name, send=self._on_frame, restart=self._restart
        )
        self.channel_name, self.io, self.follower = own.channel_name, own.io, own.follower
        self._body = Body()
        self._opened: asyncio.Future[None] | None = None
        self._acting = False  # the request's action was taken: its run is the next one

    @property
    def following(self) -> bool:
        return self.writer.run_id is not None

    async def open(self) -> None:
        """Follow the conversation, until its first history frame (which a run in
        flight answers with its catch-up); raises what opening raised
        (``SessionOwnershipError``: someone else's since the visitor was found)."""
        self._opened = asyncio.get_running_loop().create_future()
        self._body.start(self._follow(), heartbeats=False)  # beats once the response goes
        await asyncio.shield(self._opened)

    async def act(self, action: Callable[[], Awaitable[None]]) -> None:
        """Take the request's action; the run it starts (or resumes) is followed."""
        self._acting = True
        try:
            await action()
        except BaseException:
            self._acting = False
            raise

    def __aiter__(self) -> AsyncIterator[str]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[str]:
        self._body.beat()
        try:
            while (chunk := await self._body.out.get()) is not END:
                yield chunk
        finally:
            await self.aclose()

    def close(self) -> None:
        """Django's call when the response is over (possibly from another thread)."""
        self._body.close_soon(self.aclose)

    async def aclose(self) -> None:
        if not self._body.closing():
            return
        await leave(self.follower, tell_the_run=False)
        ongoing = (self._acting or self.following) and not self.writer.ended
        if ongoing and not app_settings.CONTINUE_RUNS_AFTER_DISCONNECT:
            await self._stop()

    async def _stop(self) -> None:
        """The client went away mid-run: ``stop()``, or a reload, or the network."""
        cancel = {"type": "cancel", **({"run_id": self.writer.run_id} if self.following else {})}
        try:
            await detached(actions.cancel(self.visitor, cancel))
        except Exception:
            logger.warning("Could not stop the run of a chat stream that ended.", exc_info=True)

    async def _follow(self) -> None:
        assert self._opened is not None
        try:
            # Its history frame may come later (a catch-up). On a new id, no second
            # lookup: the request's own message opens the conversation next.
            await self.follower.open(look_again=False)
            while True:
                await self.follower.handle(await self.io.next_message())
        except asyncio.CancelledError:
            raise
        except Exception as failed:
            if not self._opened.done():
                self._opened.set_exception(failed)
                return
            logger.exception("A chat stream failed; it ends.")
        self._end()

    async def _restart(self) -> None:
        self._end()  # this worker stops: the client resumes (``resume: true``) elsewhere

    def _end(self) -> None:
        self._body.put(DONE)
        self._body.end()
        if self._opened is not None and not self._opened.done():
            self._opened.set_result(None)  # ended before any history (a drain): open no more

    def _write(self, chunks: list[Chunk]) -> None:
        for chunk in chunks:
            self._body.put(chunk_text(chunk))
        if self.writer.ended:
            self._end()

    # What the follower gives ---------------------------------------------------------

    async def _on_frame(self, frame: dict[str, Any]) -> None:
        if self.writer.ended:
            return
        kind = frame.get("type")
        if kind == "history":
            return self._on_history(frame)
        if not self.following:
            if kind == "run.started" and self._acting:
                self._write(self.writer.begin(str(frame["run_id"])))
            else:
                return  # another run's, or before the request's action
        if frame.get("run_id") != self.writer.run_id:
            return
        self._write(self.writer.event(frame))
        if kind == "approval.requested" and await self._last_request(frame):
            self._write(self.writer.pause())

    def _on_history(self, frame: dict[str, Any]) -> None:
        active = frame.get("active_run")
        if self.following:
            return self._recovered(frame)
        if self._opened is None:
            return
        if not self._opened.done():  # the first: what the conversation holds
            if self.resume and active is not None:
                self._catch_up(active)
            return self._opened.set_result(None)
        if self._acting and active is not None:
            # The request's run, joined late (the message opened a conversation created
            # meanwhile, announced through the layer): its catch-up.
            self._catch_up(active)

    def _catch_up(self, active: dict[str, Any]) -> None:
        """A run in flight from its start, what it did so far first: resuming is
        replaying (``DefaultChatTransport.resumeStreamIsReplay``)."""
        chunks = self.writer.begin(str(active["run_id"]))
        for item in active.get("items", []):
            chunks += self.writer.item(item)
        if active.get("text"):
            chunks += self.writer.text(active["text"])
        self._write(chunks)

    def _recovered(self, frame: dict[str, Any]) -> None:
        """A history frame while following: the follower lost track of the run and
        shows what the record says (``Relay``). Unless the run is still in flight, it
        is what this response ends with."""
        run_id = self.writer.run_id
        active = frame.get("active_run") or {}
        if active.get("run_id") == run_id:
            return  # in flight: its events go on
        waiting = [
            call for call in frame.get("pending_approvals", []) if call.get("run_id") == run_id
        ]
        if waiting:
            chunks = [chunk for call in waiting for chunk in self.writer.approval_requested(call)]
            return self._write([*chunks, *self.writer.pause()])
        ours = [item for item in frame.get("items", []) if item.get("run_id") == run_id]
        last = ours[-1] if ours else {}
        chunks = []
        if last.get("kind") == "message":  # its reply, or what a stopped run had written
            chunks = self.writer.item({**last, "role": "assistant"})
        status = last.get("status") if last.get("id") is None else None
        error = {"code": (last.get("error") or {}).get("code", "agent_error"), "message": ""}
        end = {"type": f"run.{status}", "error": error} if status else {"type": "run.completed"}
        self._write([*chunks, *self.writer.end(end)])

    async def _last_request(self, frame: dict[str, Any]) -> bool:
        """Whether the run now waits with this as its last request: its record says so
        (a paused run is stored, with its last event's seq, before it publishes)."""
        conversation_pk = self.visitor.conversation_pk
        if conversation_pk is None:
            return False
        status, seq = await history.run_progress(conversation_pk, str(frame["run_id"])) or ("", 0)
        return status == "waiting" and seq <= int(frame.get("seq", 0))
