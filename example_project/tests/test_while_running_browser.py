"""A message sent during a reply in headless Chromium, with ``WHILE_RUNNING =
"interrupt"``: Send stays offered beside Stop, the message stops the reply (shown as
stopped) and gets its own answer; desktop and phone, axe-clean, on both transports."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from example_project.tests.conftest import log_in
from example_project.tests.servers import (
    DaphneServer,
    ServerDatabase,
    create_user,
    server_environment,
)
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    desktop_and_phone,
    docs_screenshot,
    new_page,
)
from example_project.tests.test_e2e_browser import ASSISTANT, CONFIRMED, send, wait_idle
from example_project.tests.transport_servers import started_for
from tests.browser import axe_violations

pytestmark = pytest.mark.browser
STREAMING = f"{ASSISTANT}.is-streaming"


@pytest.fixture(scope="module", params=["websocket", "sse"])
def interrupting_server(
    request: Any, server_database: ServerDatabase, log_dir: Path
) -> Iterator[DaphneServer]:
    """The example project where a message interrupts a reply, for each transport."""
    env = server_environment(server_database.url, WHILE_RUNNING="interrupt", RATE_LIMIT="120/m")
    server = started_for(request.param, "interrupting", log_dir, env)
    yield server
    server.close()


@desktop_and_phone("chat-interrupt")
def test_a_message_during_a_reply_stops_it_and_is_answered(
    interrupting_server,
    new_page,  # noqa: F811
    name,
    options,
):
    page = new_page(**options)
    log_in(page, interrupting_server.url, create_user(interrupting_server.env))
    send(page, "Tell me a long story")
    page.wait_for_selector(STREAMING)
    # Both offered while the reply is written: Stop, and Send (which stops it too).
    assert page.get_by_role("button", name="Stop").is_visible()
    assert page.get_by_role("button", name="Send").is_enabled()
    send(page, "What is 6 * 7?")
    page.wait_for_selector(f'{ASSISTANT}[data-status="cancelled"]')
    wait_idle(page)
    said = page.locator(f"{CONFIRMED} .text").all_text_contents()
    assert [text.strip() for text in said][-2:] == [
        "Tell me a long story",
        "What is 6 * 7?",
    ]
    last = str(page.locator(f"{ASSISTANT} .text").last.text_content())
    assert "42" in last
    assert page.locator("#error-banner").is_hidden()  # no "busy"
    assert axe_violations(page) == []
    docs_screenshot(page, name)
    # A reload shows the same: the stopped reply, then the message and its answer.
    page.reload()
    page.wait_for_selector(f'{ASSISTANT}[data-status="cancelled"]')
    assert "42" in str(page.locator(f"{ASSISTANT} .text").last.text_content())
