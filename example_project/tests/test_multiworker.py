"""Two daphne workers behind two loopback ports, sharing PostgreSQL and Redis.

This is the production layout of docs/example-project.md: every worker sees every run of
a conversation through the Redis channel layer, whichever worker runs it, and a Stop
pressed on one worker cancels the run on the other. PostgreSQL and Redis are required:
without them this test fails (bin/test starts both).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from example_project.tests.conftest import log_in, wait_connected
from example_project.tests.servers import (
    DaphneServer,
    ServerDatabase,
    create_user,
    server_environment,
    start_all,
)
from tests.browser import save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.long(25)]

REPLY = ".message-assistant .text"


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory, log_dir: Path) -> Iterator[list[Any]]:
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        pytest.fail("REDIS_URL is not set: run bin/test, which starts Redis and PostgreSQL.")
    if not os.environ.get("PGHOST"):
        pytest.fail("PGHOST is not set: run bin/test, which starts Redis and PostgreSQL.")
    database = ServerDatabase(tmp_path_factory.mktemp("workers-db"), backend="postgres")
    env = server_environment(
        database.url,
        REDIS_URL=redis_url,
        # Keys of their own, so that runs sharing the Redis server never cross.
        CHANNEL_LAYER_PREFIX=f"example-{uuid.uuid4().hex[:8]}:",
    )
    servers = [DaphneServer(f"worker-{n}", log_dir, env) for n in (1, 2)]
    try:
        start_all(servers)
        yield servers
    finally:
        for server in servers:
            server.close()
        database.drop()


def test_both_workers_see_the_run_and_stop_crosses_workers(browser, workers):
    first, second = workers
    assert first.port != second.port
    user = create_user(first.env)
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    context.set_default_timeout(20_000)
    try:
        tab_one = context.new_page()
        log_in(tab_one, first.url, user)
        path = tab_one.url.removeprefix(first.url)
        tab_two = context.new_page()  # same login: the session lives in PostgreSQL
        tab_two.goto(second.url + path)
        wait_connected(tab_two)

        tab_one.get_by_label("Message", exact=True).fill("What is 6 * 7?")
        tab_one.keyboard.press("Enter")
        for tab in (tab_one, tab_two):
            tab.wait_for_selector(".message-user .text:text-is('What is 6 * 7?')")
            tab.wait_for_selector("details.tool-call summary:text('Tool call: calculate')")
            tab.wait_for_selector(f"{REPLY} p:text-is('The calculator says 6 * 7 = 42.')")

        # Idle sockets stay open (a Redis read timeout would drop them after 5 s).
        dropped = [server.log().count("WSDISCONNECT") for server in workers]
        tab_one.wait_for_timeout(7_000)
        assert [server.log().count("WSDISCONNECT") for server in workers] == dropped

        # A run started on worker 2, stopped from worker 1.
        tab_two.get_by_label("Message", exact=True).fill("Tell me a long story")
        tab_two.keyboard.press("Enter")
        tab_one.get_by_role("button", name="Stop").wait_for()
        tab_one.wait_for_selector(".message-assistant.is-streaming")
        tab_one.get_by_role("button", name="Stop").click()
        for tab in (tab_one, tab_two):
            tab.wait_for_selector(".message-assistant .note:text('Stopped.')")
            tab.wait_for_selector("#stop-button", state="hidden")
        save_screenshot(tab_one, "multiworker-worker-1")
        save_screenshot(tab_two, "multiworker-worker-2")

        # Both workers read the same history from PostgreSQL.
        tab_two.reload()
        wait_connected(tab_two)
        tab_two.wait_for_selector(f"{REPLY} p:text-is('The calculator says 6 * 7 = 42.')")
        assert tab_two.locator(".message-user .text").all_text_contents() == [
            "What is 6 * 7?",
            "Tell me a long story",
        ]
    finally:
        context.close()
