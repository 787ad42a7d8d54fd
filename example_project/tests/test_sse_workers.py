"""Two uvicorn workers without Channels or Redis, sharing only PostgreSQL.

The example project with ``CHANNEL_LAYER=none`` and ``CHAT_TRANSPORT=sse``: a run started
by a POST on one worker reaches the event streams held by the other through PostgreSQL's
LISTEN/NOTIFY (``layers.postgres``). The PostgreSQL server is this module's own, so the
tests restart it, and kill a worker with SIGKILL, for real, under the packaged chat's
streams and under the AI SDK adapter's ``useChat`` requests. Clients are plain HTTP
(``example_project/tests/live_sse.py``).
"""

from __future__ import annotations

import http.client
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest

from example_project.tests.live import log_in
from example_project.tests.live_sse import LiveStream, post
from example_project.tests.servers import (
    UvicornServer,
    create_user,
    server_environment,
    start_all,
    start_migrated_postgres,
)
from tests.services import PostgresServer

pytestmark = [pytest.mark.timeout(300), pytest.mark.long(30)]

LEASE = 6  # RUN_LEASE_SECONDS: a killed worker's run is noticed within about this
STORY = "Tell me a long story"


class Workers:
    def __init__(self, postgres: PostgresServer, env: dict[str, str]) -> None:
        self.postgres, self.env = postgres, env
        self.servers: list[UvicornServer] = []
        self.cookie = ""

    def url(self, worker: int) -> str:
        return self.servers[worker].url

    def stream(self, worker: int, session_id: str) -> LiveStream:
        return LiveStream(self.url(worker), session_id, self.cookie)

    def say(self, worker: int, session_id: str, text: str) -> None:
        status, body = post(
            self.url(worker), f"/c/{session_id}/messages/", {"text": text}, self.cookie
        )
        assert status == 202, body

    def statuses(self, session_id: str) -> list[tuple[str, str]]:
        with psycopg.connect(self.env["DATABASE_URL"], autocommit=True) as connection:
            return connection.execute(
                b"SELECT r.status, r.error_code FROM django_agent_sessions_agentrun r "
                b"JOIN django_agent_sessions_agentsession s ON s.id = r.session_id "
                b"WHERE s.session_id = %s ORDER BY r.started_at",
                (session_id,),
            ).fetchall()


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory, log_dir: Path) -> Iterator[Workers]:
    postgres = PostgresServer()
    servers: list[UvicornServer] = []
    try:
        env = server_environment(
            start_migrated_postgres(postgres),
            CHANNEL_LAYER="none",
            CHAT_TRANSPORT="sse",
            CONN_MAX_AGE="600",
            RUN_LEASE_SECONDS=str(LEASE),
            CONTINUE_RUNS_AFTER_DISCONNECT="0",
            RATE_LIMIT="1000/m",
        )
        result = Workers(postgres, env)
        servers = [UvicornServer(f"sse-{n}", log_dir, env) for n in (1, 2)]
        result.servers = servers
        start_all(servers)
        result.cookie = log_in(servers[0].url, create_user(env))
        yield result
    finally:
        for server in servers:
            server.close()
        postgres.stop()


@pytest.fixture
def live(workers: Workers) -> Workers:
    for server in workers.servers:
        if server.process is None or server.process.poll() is not None:
            server.start()
    return workers


def watched_from_worker_2(live: Workers) -> tuple[str, LiveStream]:
    """A conversation with one finished run (started on worker 1), streamed on worker 2."""
    session_id = uuid.uuid4().hex
    live.say(0, session_id, "hi")  # creates the conversation
    watcher = live.stream(1, session_id)
    watcher.until("run.completed")
    return session_id, watcher


def shown_text(frames: list[dict[str, Any]]) -> str:
    """The reply as a page shows it: a catch-up's text, then the deltas."""
    text = ""
    for frame in frames:
        if frame["type"] == "history" and frame.get("active_run"):
            text = frame["active_run"]["text"]
        elif frame["type"] == "text.delta":
            text += frame["delta"]
    return text


def test_a_stream_on_worker_2_follows_a_run_started_on_worker_1(live):
    session_id = uuid.uuid4().hex
    watcher = live.stream(1, session_id)
    assert watcher.frame()["type"] == "history"
    live.say(0, session_id, "Hello from worker one")
    frames = watcher.until("run.completed", "run.failed")
    assert frames[-1]["type"] == "run.completed", frames[-1]
    completed = [f["item"] for f in frames if f["type"] == "item.completed"]
    assert shown_text(frames) == completed[-1]["text"]
    # A second run, the stream now in the conversation: every event crosses workers.
    live.say(0, session_id, STORY)
    frames = watcher.until("run.completed", "run.failed")
    assert frames[0]["type"] == "run.started"
    assert len(shown_text(frames)) > 3000
    watcher.close()
    assert live.statuses(session_id) == [("completed", ""), ("completed", "")]


def test_stop_on_worker_2_stops_the_run_on_worker_1(live):
    session_id, watcher = watched_from_worker_2(live)
    live.say(0, session_id, STORY)
    watcher.until("text.delta")
    status, _body = post(live.url(1), f"/c/{session_id}/cancel/", {}, live.cookie)
    assert status == 202
    assert watcher.until("run.cancelled", "run.completed")[-1]["type"] == "run.cancelled"
    watcher.close()


def test_a_killed_workers_run_ends_as_worker_lost_on_the_other(live):
    session_id, watcher = watched_from_worker_2(live)
    live.say(0, session_id, STORY)
    watcher.until("text.delta")
    live.servers[0].process.kill()  # SIGKILL: no cleanup of any kind
    killed_at = time.monotonic()
    end = watcher.until("run.failed", "run.completed", "run.cancelled", timeout=LEASE * 4)[-1]
    print(
        f"MEASURED worker_lost reached worker 2 {time.monotonic() - killed_at:.1f}s after SIGKILL"
    )
    assert (end["type"], end["error"]["code"]) == ("run.failed", "worker_lost")
    watcher.close()


def test_streams_follow_runs_again_after_postgresql_restarts(live):
    session_id, watcher = watched_from_worker_2(live)
    live.postgres.restart()
    # The listener connects again by itself and the stream reads the conversation again.
    resynced = watcher.until("history", timeout=30)[-1]
    assert resynced["active_run"] is None
    # The first message after the restart may meet a connection the restart broke (the
    # page shows "unavailable"); the next one goes through.
    for _attempt in range(20):
        status, _body = post(
            live.url(0), f"/c/{session_id}/messages/", {"text": "again"}, live.cookie
        )
        if status == 202:
            break
        time.sleep(0.5)
    assert status == 202
    frames = watcher.until("run.completed", "run.failed")
    assert frames[-1]["type"] == "run.completed"
    watcher.close()


def use_chat(live: Workers, worker: int, session_id: str, text: str) -> LiveStream:
    """A ``useChat`` message to the AI SDK adapter of ``worker``; its response's stream."""
    message = {"id": uuid.uuid4().hex, "role": "user", "parts": [{"type": "text", "text": text}]}
    body = {"id": session_id, "messages": [message], "trigger": "submit-message"}
    return LiveStream(live.url(worker), session_id, live.cookie, path="/ai-sdk/chat", body=body)


def resume_status(live: Workers, worker: int, session_id: str) -> int:
    """The status of ``useChat``'s resume (``resume: true``) on ``worker``."""
    parts = urlsplit(live.url(worker))
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=15)
    try:
        path = f"/ai-sdk/chat/{session_id}/stream"
        connection.request("GET", path, headers={"Cookie": live.cookie})
        return connection.getresponse().status
    finally:
        connection.close()


def test_a_use_chat_reply_whose_worker_is_killed_ends_worker_lost_and_the_chat_goes_on(live):
    """The AI SDK adapter on two workers: its reply's worker is killed (SIGKILL) mid-reply;
    a page on the other worker learns ``worker_lost``, that worker's resume finds nothing
    in flight (204), and the chat's next message there is answered."""
    session_id, watcher = watched_from_worker_2(live)
    reply = use_chat(live, 0, session_id, STORY)
    reply.until("text-delta")
    live.servers[0].process.kill()  # SIGKILL: no cleanup of any kind
    end = watcher.until("run.failed", "run.completed", "run.cancelled", timeout=LEASE * 4)[-1]
    assert (end["type"], end["error"]["code"]) == ("run.failed", "worker_lost")
    reply.close()
    assert resume_status(live, 1, session_id) == 204  # nothing in flight to rejoin
    again = use_chat(live, 1, session_id, "Are you there?")
    chunks = again.until("finish", "error")
    assert (chunks[-1]["type"], chunks[-1].get("finishReason")) == ("finish", "stop")
    assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    watcher.close()
    assert live.statuses(session_id)[-2:] == [("failed", "worker_lost"), ("completed", "")]
