"""A Redis outage fails no run, in the documented production mode.

Two daphne workers of the example project on a PostgreSQL cluster and a Redis server of
this module's own (``run_truth_live_helpers``). Redis is stopped for two seconds in the
middle of a run that one tab started on worker 1 and another follows on worker 2: the
run goes on, publishing resumes once Redis is back, and both tabs (reconnecting as the
page does when the outage closed their socket) end showing the stored reply
(docs/wire-protocol.md, "Nothing a tab follows is lost").
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest
import websockets

from example_project.tests.live import LiveSocket
from example_project.tests.run_truth_live_helpers import (  # noqa: F401 - the fixtures
    Stack,
    live,
    new_id,
    run_status,
    stack,
    wait_for,
)
from tests.shown import Shown

pytestmark = [pytest.mark.redis, pytest.mark.timeout(300), pytest.mark.long(30)]

STORY = "Tell me a long story"
OUTAGE_SECONDS = 2.0  # the scenario: Redis gone this long in the middle of the run


async def _until_shown(
    live: Stack,  # noqa: F811
    worker: int,
    socket: LiveSocket,
    page: Shown,
    reply: str,
) -> None:
    """Until the page shows the reply ended; a socket the outage closed (1011) is
    opened again, as the page does."""
    deadline = time.monotonic() + 30
    while not (page.ended and page.reply == reply):
        assert time.monotonic() < deadline, vars(page)
        try:
            page.see(await socket.receive(timeout=max(0.1, deadline - time.monotonic())))
        except websockets.ConnectionClosed:
            socket = live.socket(worker, socket.url.rstrip("/").rsplit("/", 1)[-1])
            page.see(await socket.open())


def _stored_reply(live: Stack, run_id: str) -> str:  # noqa: F811
    rows = live.query(
        "SELECT i.payload FROM django_agent_sessions_sessionitem i"
        " JOIN django_agent_sessions_agentrun r ON r.session_id = i.session_id"
        " WHERE r.run_id = %s AND i.role = 'assistant' ORDER BY i.id DESC LIMIT 1",
        uuid.UUID(run_id),
    )
    assert rows, run_id
    return str(json.loads(rows[0][0])["content"][0]["text"])


async def test_a_run_goes_on_through_a_redis_outage_and_both_tabs_see_its_end(live):  # noqa: F811
    conversation = new_id()
    starter, follower = live.socket(0, conversation), live.socket(1, conversation)
    pages = [Shown(), Shown()]
    for socket, page in zip((starter, follower), pages, strict=True):
        page.see(await socket.open())
    await starter.send({"type": "user_message", "text": STORY})
    for socket, page in zip((starter, follower), pages, strict=True):
        for frame in await socket.until("text.delta"):
            page.see(frame)
    run_id = starter.received[-1]["run_id"]

    live.redis.stop()
    stopped_at = time.monotonic()
    await asyncio.sleep(OUTAGE_SECONDS)
    live.redis.start()
    print(f"MEASURED Redis was gone {time.monotonic() - stopped_at:.1f}s mid-run")

    assert await wait_for(lambda: run_status(live, run_id)[0] != "running", timeout=60)
    status, error = run_status(live, run_id)
    assert (status, error) == ("completed", "")
    reply = _stored_reply(live, run_id)
    assert reply.startswith("Once upon a time")
    for worker, (socket, page) in enumerate(zip((starter, follower), pages, strict=True)):
        await _until_shown(live, worker, socket, page, reply)
        assert page.repeated == []
        assert not page.busy
    for worker in live.workers:
        assert "Publishing run" not in worker.log()
