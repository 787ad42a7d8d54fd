"""A deploy drains: SIGTERM to a worker with ten runs in flight, under uvicorn and daphne.

Two workers serve the test suite's application wrapped in ``Draining``
(``tests/asgi_draining.py``), on the test database and Redis, with ``DRAIN_SECONDS`` 4.
Worker A has ten runs in flight, nine that need about a second more and one that needs
ten. SIGTERM to A: its tabs are closed with 1012 and reconnect to worker B, which shows
them the runs going on in A; the nine complete, the tenth ends ``interrupted`` with a
valid history, and A exits once its runs have ended.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from collections.abc import Iterator

import pytest
import websockets

from django_agent_sessions.models import AgentRun, SessionItem
from tests.daphne_workers import Worker, two_workers
from tests.live_clients import LiveSocket
from tests.shown import Shown
from tests.websockets import login_cookie

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.redis,
    pytest.mark.once,
    pytest.mark.long(25),
]

DRAIN_SECONDS = 4.0
SERVERS = {
    "uvicorn": ("-m", "uvicorn", "tests.asgi_draining:application", "--lifespan", "on"),
    # daphne has no lifespan: the wrapper takes SIGTERM from the first connection on.
    "daphne": ("-m", "daphne", "tests.asgi_draining:application"),
}
# The demo agent echoes a message in 3-character tokens 10 ms apart: about a second.
FITS = "tell me something " * 17
LONG = "tell me a long story"  # its reply streams for about ten seconds


@pytest.fixture(params=sorted(SERVERS))
def workers(request, tmp_path) -> Iterator[list[Worker]]:
    with two_workers(
        tmp_path,
        command=SERVERS[request.param],
        AGENT_SESSIONS_TEST_AGENT="tests.chat_agent.make_demo_agent",
        AGENT_SESSIONS_CHANNEL_PREFIX=f"drain-{uuid.uuid4().hex[:8]}:",
        AGENT_SESSIONS_TEST_SETTINGS=json.dumps({"DRAIN_SECONDS": DRAIN_SECONDS}),
    ) as started:
        yield started


async def _until_closed(tab: LiveSocket, page: Shown) -> int:
    while True:
        try:
            page.see(await tab.frame(timeout=DRAIN_SECONDS + 10))
        except websockets.ConnectionClosed:
            return int(tab.connection.close_code or 0)


async def _until_ended(tab: LiveSocket, page: Shown) -> None:
    deadline = time.monotonic() + 30
    while not page.ended:
        assert time.monotonic() < deadline, vars(page)
        page.see(await tab.frame())


def _stored_reply(session_id: str) -> str:
    rows = SessionItem.objects.filter(session__session_id=session_id, role="assistant")
    last = rows.order_by("-id").first()
    return "" if last is None else str(json.loads(last.payload)["content"][0]["text"])


def test_sigterm_drains_a_worker_into_the_other(workers, make_user):
    cookie = login_cookie(make_user("alice")).decode()
    worker_a, worker_b = workers
    sessions = [f"drain-{n}-{uuid.uuid4().hex[:6]}" for n in range(10)]
    messages = [FITS] * 9 + [LONG]

    async def scenario() -> tuple[list[Shown], list[int], float]:
        tabs = [await LiveSocket.open(worker_a.port, s, cookie) for s in sessions]
        pages = [Shown() for _ in tabs]
        for tab, page, text in zip(tabs, pages, messages, strict=True):
            page.see(await tab.frame())
            await tab.say(text)
        for tab, page in zip(tabs, pages, strict=True):
            while not page.streaming:
                page.see(await tab.frame())
        assert worker_a.process is not None
        worker_a.process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        codes = [await _until_closed(tab, page) for tab, page in zip(tabs, pages, strict=True)]
        moved = [await LiveSocket.open(worker_b.port, s, cookie) for s in sessions]
        for tab, page in zip(moved, pages, strict=True):
            await _until_ended(tab, page)
            await tab.close()
        return pages, codes, signalled

    pages, codes, signalled = asyncio.run(scenario())
    # Ours (4012), or uvicorn's own as it shuts down (1012): the page reconnects at once.
    assert set(codes) <= {4012, 1012}, codes
    assert worker_a.process is not None
    worker_a.process.wait(timeout=DRAIN_SECONDS + 15)
    print(f"MEASURED worker A exited {time.monotonic() - signalled:.1f}s after SIGTERM")
    statuses = {
        str(run.session.session_id): (run.status, run.error_code)
        for run in AgentRun.objects.select_related("session")
    }
    for session_id, page in zip(sessions[:9], pages[:9], strict=True):
        assert statuses[session_id] == ("completed", "")
        assert page.reply == _stored_reply(session_id) != ""
        assert page.repeated == []
    assert statuses[sessions[9]] == ("interrupted", "interrupted")
    assert not pages[9].busy
    assert "Drained." in worker_a.log(), worker_a.log()
    assert "Traceback" not in worker_a.log() + worker_b.log()
