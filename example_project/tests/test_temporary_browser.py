"""Temporary chats in headless Chromium, on both transports, desktop and phone: "New
temporary chat" starts one, the page says it is one (axe-clean), it never shows in the
sidebar's list or the search, and once its page is closed it is gone from the database
after the grace (the server's is one second)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from example_project.tests.conftest import log_in, wait_connected
from example_project.tests.servers import (
    DaphneServer,
    ServerDatabase,
    create_user,
    manage,
    query,
    server_environment,
)
from example_project.tests.sizes import each_transport_and_size
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    docs_screenshot,
    new_page,
)
from example_project.tests.test_conversations_browser import listed, until_listed
from example_project.tests.transport_servers import started_for
from tests.browser import axe_violations

pytestmark = pytest.mark.browser

# Read in SQL: a ``manage.py shell`` costs a process start (seconds), each poll.
COUNT = (
    "SELECT COUNT(*) FROM django_agent_sessions_agentsession AS chat"
    " JOIN auth_user ON auth_user.id = chat.owner_id"
    " WHERE auth_user.username = %s AND chat.temporary"
)


@pytest.fixture(scope="module", params=["websocket", "sse"])
def temporary_server(
    request: Any, server_database: ServerDatabase, log_dir: Path
) -> Iterator[DaphneServer]:
    env = server_environment(server_database.url, TEMPORARY_GRACE_SECONDS="1")
    server = started_for(request.param, "temporary", log_dir, env)
    yield server
    server.close()


def kept_one(env: dict[str, str], owner: str) -> None:
    """A conversation of ``owner``'s that is not temporary: the list is not empty."""
    manage(
        env,
        "shell",
        "-c",
        "import uuid\n"
        "from asgiref.sync import async_to_sync\n"
        "from django.contrib.auth import get_user_model\n"
        "from django_agent_sessions import DjangoSession\n"
        f"owner = get_user_model().objects.get(username={owner!r})\n"
        "session = DjangoSession(uuid.uuid4().hex, owner=owner)\n"
        "async_to_sync(session.add_items)([{'role': 'user', 'content': 'Kept notes'}])\n",
    )


def temporary_chats(env: dict[str, str], owner: str) -> int:
    [(count,)] = query(env, COUNT, (owner,))
    return int(count)


def open_sidebar(page: Any) -> None:
    toggle = page.locator("#sidebar-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false":
        toggle.click()


@each_transport_and_size("temporary_server", "chat-temporary")
def test_a_temporary_chat_is_never_listed_and_goes_with_its_page(
    temporary_server,
    new_page,  # noqa: F811
    name,
    options,
):
    user = create_user(temporary_server.env)
    kept_one(temporary_server.env, user[0])
    page = new_page(**options)
    log_in(page, temporary_server.url, user)
    open_sidebar(page)
    assert listed(page) == ["Kept notes"]

    page.get_by_role("link", name="New temporary chat").click()
    page.wait_for_url(re.compile(r".*/c/[0-9a-f]{32}/\?temporary=1$"))
    wait_connected(page)
    page.locator("#temporary-note", has_text="Temporary chat").wait_for()
    page.locator("#message").fill("remember the word zanzibar")
    page.locator("#message").press("Enter")
    page.locator('[data-kind="message"][data-role="assistant"]').last.wait_for()
    page.wait_for_selector("#send-button:not([hidden])")
    assert temporary_chats(temporary_server.env, user[0]) == 1  # stored while open

    # Never in the list (refreshed by the run), nor in the search.
    open_sidebar(page)
    until_listed(page, ["Kept notes"])
    box = page.get_by_role("searchbox", name="Search conversations")
    box.fill("zanzibar")
    box.press("Enter")
    page.locator("#search-status", has_text="Nothing found.").wait_for()
    assert axe_violations(page) == []
    docs_screenshot(page, name)

    # Closed: gone once the grace is over.
    page.close()
    deadline = time.monotonic() + 20
    while temporary_chats(temporary_server.env, user[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert temporary_chats(temporary_server.env, user[0]) == 0
