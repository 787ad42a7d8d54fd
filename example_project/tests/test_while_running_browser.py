"""A message sent during a reply in headless Chromium, with ``WHILE_RUNNING =
"interrupt"``: Send stays offered beside Stop, the message stops the reply (shown as
stopped) and gets its own answer; with ``"queue"``: the message is listed as queued
under the reply, edited or removed there, still queued after a reload, and sent once
the reply ends. Desktop and phone, axe-clean, on both transports."""

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
from example_project.tests.sizes import each_transport_and_size
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
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


@each_transport_and_size("interrupting_server", "chat-interrupt")
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
    assert page.get_by_role("button", name="Stop", exact=True).is_visible()
    assert page.get_by_role("button", name="Send", exact=True).is_enabled()
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


@pytest.fixture(scope="module", params=["websocket", "sse"])
def queueing_server(
    request: Any, server_database: ServerDatabase, log_dir: Path
) -> Iterator[DaphneServer]:
    """The example project where a message sent during a reply waits its turn."""
    env = server_environment(server_database.url, WHILE_RUNNING="queue", RATE_LIMIT="120/m")
    server = started_for(request.param, "queueing", log_dir, env)
    yield server
    server.close()


def queue(page: Any, text: str) -> Any:
    """Send ``text`` during the reply; its entry in the list of queued messages."""
    box = page.get_by_label("Message", exact=True)
    box.fill(text)
    box.press("Enter")
    entry = page.locator("#queued-messages li", has_text=text)
    entry.wait_for()
    return entry


@each_transport_and_size("queueing_server", "chat-queue")
def test_messages_during_a_reply_are_queued_edited_kept_and_sent(
    queueing_server,
    new_page,  # noqa: F811
    name,
    options,
):
    page = new_page(**options)
    log_in(page, queueing_server.url, create_user(queueing_server.env))
    send(page, "Tell me a long story")
    page.wait_for_selector(STREAMING)
    queue(page, "What is 6 * 6?")
    second = queue(page, "Never mind this one")
    second.get_by_role("button", name="Remove: Never mind this one").click()
    second.wait_for(state="detached")
    page.get_by_role("button", name="Edit queued message: What is 6 * 6?").click()
    field = page.get_by_label("Edit queued message", exact=True)
    field.fill("What is 6 * 7?")
    page.locator("#queued-messages").get_by_role("button", name="Save").click()
    page.locator("#queued-messages li", has_text="What is 6 * 7?").wait_for()
    assert page.locator(f"{CONFIRMED} .text").all_text_contents()[-1].strip() == (
        "Tell me a long story"
    )  # queued, not sent: no bubble yet
    assert axe_violations(page) == []
    docs_screenshot(page, name)
    # A reload: the reply goes on, the message is still queued, its edit kept.
    page.reload()
    page.locator("#queued-messages li", has_text="What is 6 * 7?").wait_for()
    page.wait_for_selector(STREAMING)
    assert page.locator("#queued-messages li").count() == 1
    # The reply ends (stopped here): the queued message is sent and answered.
    page.get_by_role("button", name="Stop", exact=True).click()
    page.wait_for_selector(f'{ASSISTANT}[data-status="cancelled"]')
    page.locator(CONFIRMED, has_text="What is 6 * 7?").wait_for()
    page.wait_for_selector("#queued-messages", state="hidden")
    wait_idle(page)
    assert "42" in str(page.locator(f"{ASSISTANT} .text").last.text_content())
    assert page.locator("#error-banner").is_hidden()
    assert axe_violations(page) == []
