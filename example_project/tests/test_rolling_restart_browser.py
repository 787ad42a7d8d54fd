"""A rolling restart under an open chat page, in Chromium.

Two uvicorn workers of the example project accept from one listening socket, as workers
behind one address do, on PostgreSQL and Redis of this module's own. The page asks for a
long story; while it streams, each worker in turn gets SIGTERM, drains and is started
again (docs/integration.md, "Deploys"). The worker writing the story finishes it while
the page, sent on at once, follows it from the other worker: the page ends showing the
stored story once, without a reload and without an error.
"""

from __future__ import annotations

import json
import signal
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from example_project.tests.conftest import a_failed_reconnection, log_in
from example_project.tests.servers import (
    UvicornServer,
    create_user,
    server_environment,
    start_all,
    start_migrated_postgres,
)
from example_project.tests.test_e2e_browser import ASSISTANT, context, page, send  # noqa: F401
from tests.browser import save_screenshot
from tests.services import PostgresServer, RedisServer

pytestmark = [pytest.mark.redis, pytest.mark.timeout(300), pytest.mark.long(45)]

# The default drain. The story takes about 10 s on an idle machine (DEMO_MODEL_DELAY
# 0.01): it fits with room to spare on a machine busy with other tests; at 0.02 (20 s),
# a loaded machine stretched it past the drain and the run ended interrupted.
DRAIN_SECONDS = 25


class SharedPortServer(UvicornServer):
    """A uvicorn worker accepting from a listening socket it shares with the others."""

    def __init__(self, name: str, log_dir: Path, env: dict[str, str], listener: Any) -> None:
        super().__init__(name, log_dir, env)
        self.listener.close()
        self.listener, self.port = listener, listener.getsockname()[1]

    def drain_and_restart(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=DRAIN_SECONDS + 15)
        self.start()


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory, log_dir: Path) -> Iterator[Any]:
    base = tmp_path_factory.mktemp("rolling")
    postgres, redis = PostgresServer(), RedisServer(base / "redis")
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    servers: list[SharedPortServer] = []
    try:
        redis.start()
        env = server_environment(
            start_migrated_postgres(postgres),
            REDIS_URL=redis.url,
            CHANNEL_LAYER_PREFIX=f"rolling-{uuid.uuid4().hex[:8]}:",
            DEMO_MODEL_DELAY="0.01",
        )
        servers = [SharedPortServer(f"rolling-{n}", log_dir, env, listener) for n in (1, 2)]
        start_all(servers)
        yield servers
    finally:
        for server in servers:
            server.stop()
        listener.close()
        redis.stop()
        postgres.stop()


def _stored_story(env: dict[str, str]) -> str:
    with psycopg.connect(env["DATABASE_URL"], autocommit=True) as connection:
        row = connection.execute(
            "SELECT payload FROM django_agent_sessions_sessionitem"
            " WHERE role = 'assistant' ORDER BY id DESC LIMIT 1"
        ).fetchone()
    assert row is not None
    return str(json.loads(row[0])["content"][0]["text"])


def story_through_a_rolling_restart(tab: Any, workers: list[Any], shots: str) -> None:
    """The page (``tab``) asks for a long story; each worker in turn drains and starts
    again while it streams; the page ends showing the stored story once, with no error."""
    first = workers[0]
    log_in(tab, first.url, create_user(first.env))
    send(tab, "Tell me a long story")
    reply = tab.locator(ASSISTANT).last
    reply.get_by_text("Part 2 of the long story", exact=False).wait_for()
    for server in workers:  # one at a time, as a deploy does
        server.drain_and_restart()
        save_screenshot(tab, f"{shots}-after-{server.name}")
    tab.wait_for_selector("#stop-button", state="hidden", timeout=60_000)
    tab.wait_for_selector("#send-button:not([disabled])")
    story = _stored_story(first.env)
    assert story.endswith("press Stop whenever you like.")
    assert tab.locator(ASSISTANT).count() == 1
    assert reply.locator(".text").inner_text().strip() == story
    assert tab.locator("#error-banner").is_hidden()
    assert tab.locator(".run-error").count() == 0


def test_a_rolling_restart_under_a_streaming_page(workers, page, console_problems):  # noqa: F811
    story_through_a_rolling_restart(page, workers, "rolling-restart")
    save_screenshot(page, "rolling-restart-done")
    for server in workers:
        assert "Traceback" not in server.log(), server.log()
    # The page's retries that reached a worker on its way out are logged as errors: expected.
    console_problems[:] = [p for p in console_problems if not a_failed_reconnection(p)]
