"""Runs end truthfully: a socket closing at any point of a run never kills its consumer
and the run is cancelled, and a run whose worker died ends visibly, once, for every socket.

In-process, over the real middleware stack (and Redis when ``REDIS_URL`` is set). The
crash and restart scenarios with real servers are in
``example_project/tests/test_run_truth_live.py``.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from autobahn.exception import Disconnected
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from django_agent_sessions import signals
from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import runs as store_runs
from tests import chat_agent
from tests.asgi import websocket_application
from tests.conversations import run_statuses
from tests.scripted import streamed_reply, tool_turn
from tests.websocket.run_truth_helpers import LONG, agent_settings  # noqa: F401 - fixture
from tests.websockets import ORIGIN, Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

# A hang guard: the presence timeout (made short below) plus the run's settling, with a
# wide margin for a loaded machine. The tests wait for the run's end, not for this.
GRACE = 5.0


async def eventually(check: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.05)
    return bool(await check())


# 1. Sending to a closing socket never kills the consumer ------------------------------


class ClosingServer:
    """The test application as daphne runs it: once the browser has begun closing, a
    send raises ``autobahn.exception.Disconnected`` (before the consumer has read the
    ``websocket.disconnect`` that is on its way)."""

    def __init__(self) -> None:
        self.closing = False
        self.refused = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def send_like_daphne(message: dict[str, Any]) -> None:
            if self.closing and message["type"] == "websocket.send":
                self.refused += 1
                raise Disconnected("Attempt to send on a closed protocol")
            await send(message)

        await websocket_application(scope, receive, send_like_daphne)


async def close_at(point: str, session_id: str, cookie: bytes) -> ClosingServer:
    server = ClosingServer()
    communicator = WebsocketCommunicator(
        server,
        f"/ws/agent-sessions/{session_id}/",
        headers=[(b"origin", ORIGIN), (b"cookie", cookie)],
    )
    connected, _ = await communicator.connect(timeout=5)
    assert connected
    assert (await communicator.receive_json_from(timeout=5))["type"] == "history"
    text = "weather please" if point == "tool_call" else "tell me a story"
    await communicator.send_to(text_data=json.dumps({"type": "user_message", "text": text}))
    wanted = {
        "before_run_started": None,
        "after_run_started": "run.started",
        "mid_stream": "text.delta",
        "tool_call": "item.completed",
    }[point]
    while wanted is not None:
        frame = await communicator.receive_json_from(timeout=5)
        if frame["type"] == wanted and (
            point != "tool_call" or frame["item"]["kind"] == "tool_call"
        ):
            break
    server.closing = True
    # daphne knows about the close before the consumer reads it; sends meanwhile fail.
    await asyncio.sleep(0.1)
    await communicator.send_input({"type": "websocket.disconnect", "code": 1001})
    await communicator.wait(timeout=GRACE)  # the consumer ends normally: no exception
    return server


@pytest.mark.parametrize(
    "point", ["before_run_started", "after_run_started", "mid_stream", "tool_call"]
)
async def test_a_socket_closing_at_any_point_of_a_run_cancels_it(
    point, alice_cookie, session_id, use_agent
):
    # Nobody else watches: the run is cancelled once its question goes unanswered.
    use_agent("tests.chat_agent.make_agent", PRESENCE_TIMEOUT_SECONDS=0.2)
    chat_agent.tool_gate = asyncio.Event()  # the tool runs until the socket is gone
    for attempt in range(6):
        conversation = f"{session_id}-{attempt}"
        chat_agent.script(
            tool_turn("get_weather", {"city": "Paris"}, call_id="call-1")
            if point == "tool_call"
            else streamed_reply(LONG, delay=0.01),
            streamed_reply("It is sunny.", delay=0.01),
        )
        await close_at(point, conversation, alice_cookie)
        assert await eventually(lambda conversation=conversation: _ended(conversation), GRACE), (
            await run_statuses(conversation)
        )
        assert await run_statuses(conversation) == ["cancelled"], (attempt, point)
    chat_agent.tool_gate.set()


async def _ended(session_id: str) -> bool:
    found = await run_statuses(session_id)
    return bool(found) and "running" not in found


async def test_the_consumer_survives_a_refused_send_and_still_cleans_up(alice_cookie, session_id):
    chat_agent.script(streamed_reply(LONG, delay=0.01))
    server = await close_at("mid_stream", session_id, alice_cookie)
    assert server.refused >= 1  # the situation of the bug report did happen
    # disconnect() ran: the run learnt that nobody watches and was cancelled.
    assert await eventually(lambda: _ended(session_id), GRACE)
    assert await run_statuses(session_id) == ["cancelled"]


# 2. A run whose worker died ends visibly ----------------------------------------------


async def _dead_run(session_id: str, owner: Any, lease: float = 3.0) -> AgentRun:
    """A running record as a worker killed mid-run leaves it: lease about to expire."""
    conversation = await AgentSession.objects.acreate(session_id=session_id, owner=owner)
    return await AgentRun.objects.acreate(
        session=conversation,
        agent_name="Assistant",
        lease_expires_at=timezone.now() + timedelta(seconds=lease),
    )


async def _lease_over(run: AgentRun) -> None:
    """Wait until the database clock has passed the run's lease."""
    while timezone.now() <= run.lease_expires_at:
        await asyncio.sleep(0.05)


async def test_every_socket_gets_worker_lost_and_run_finished_fires_once(
    settings, alice, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RUN_LEASE_SECONDS": 0.4}
    finished: list[Any] = []

    def on_finished(sender, run, usage, user, **kwargs):
        finished.append((run.run_id, run.status, user))

    signals.run_finished.connect(on_finished)
    try:
        dead = await _dead_run(session_id, alice)
        sockets = [Socket(session_id, alice_cookie) for _ in range(2)]
        histories = [await socket.open() for socket in sockets]
        # Within the lease the run looks alive (its worker does not answer: 1 s).
        assert histories[0]["active_run"] == {"run_id": str(dead.run_id)}
        for socket in sockets:
            # The lease ends 3 s in; the margin is for a loaded machine, not the sweep.
            frames = await socket.until("run.failed", timeout=10)
            assert frames[-1]["run_id"] == str(dead.run_id)
            assert frames[-1]["error"]["code"] == "worker_lost"
        # The sockets hear first; the signal follows once the record is read back.
        for _ in range(100):
            if finished:
                break
            await asyncio.sleep(0.05)
        # Another sweep (another worker) finds nothing left to claim.
        assert await store_runs.expire_stale() == []
    finally:
        signals.run_finished.disconnect(on_finished)
    record = await AgentRun.objects.aget(pk=dead.pk)
    assert (record.status, record.error_code) == ("failed", "worker_lost")
    assert finished == [(dead.run_id, "failed", alice)]
    fresh = Socket(session_id, alice_cookie)
    assert (await fresh.open())["active_run"] is None


async def test_cancel_of_a_run_whose_lease_expired_is_answered_at_once(
    alice, alice_cookie, session_id
):
    dead = await _dead_run(session_id, alice, lease=0.5)
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await _lease_over(dead)  # the default sweeper waits 15 s: the cancel finds it first
    await socket.send({"type": "cancel"})
    end = (await socket.until("run.failed", timeout=2))[-1]
    assert (end["run_id"], end["error"]["code"]) == (str(dead.run_id), "worker_lost")


async def test_concurrent_sweeps_claim_each_lost_run_once(alice, session_id):
    dead = [await _dead_run(f"{session_id}-{n}", alice, lease=0.3) for n in range(5)]
    await _lease_over(dead[-1])
    claimed = await asyncio.gather(
        *(
            sync_to_async(store_runs.expire_stale.sync, thread_sensitive=False)(None)
            for _ in range(4)
        )
    )
    assert sorted(run.session_pk for sweep in claimed for run in sweep) == sorted(
        [pk async for pk in AgentSession.objects.values_list("pk", flat=True)]
    )
