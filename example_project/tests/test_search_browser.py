"""The sidebar's search in headless Chromium: a person finds a message of their own (never
another person's), by keyboard, with the match highlighted, and the result opens the
conversation at that message, older than the first page of its history; on both
transports."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from example_project.tests.conftest import log_in, wait_connected
from example_project.tests.servers import (
    ServerDatabase,
    create_user,
    manage,
    server_environment,
)
from example_project.tests.sizes import each_transport_and_size
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    docs_screenshot,
    new_page,
)
from example_project.tests.transport_servers import started_for
from tests.browser import axe_violations

pytestmark = pytest.mark.browser

TURNS = 400  # 800 items: more than the first page (HISTORY_LIMIT 500)


def conversation(env: dict[str, str], owner: str, word_at: int) -> str:
    """A conversation of ``owner`` whose question ``word_at`` holds a rare word."""
    session_id = f"search-{time.monotonic_ns()}"
    manage(
        env,
        "shell",
        "-c",
        "from asgiref.sync import async_to_sync\n"
        "from django.contrib.auth import get_user_model\n"
        "from django_agent_sessions import DjangoSession\n"
        f"owner = get_user_model().objects.get(username={owner!r})\n"
        "items = []\n"
        f"for n in range({TURNS}):\n"
        f"    rare = n == {word_at}\n"
        "    text = f'question {n} about the <i>zeppelin</i>' if rare else f'q {n}'\n"
        "    items.append({'role': 'user', 'content': text})\n"
        "    items.append({'type': 'message', 'role': 'assistant', 'status': 'completed',\n"
        "        'id': f'msg_{n}', 'content': [{'type': 'output_text',\n"
        "        'text': f'answer {n}', 'annotations': []}]})\n"
        f"async_to_sync(DjangoSession({session_id!r}, owner=owner).add_items)(items)\n",
    )
    return session_id


@pytest.fixture(scope="module", params=["websocket", "sse"])
def search_server(request: Any, server_database: ServerDatabase, log_dir: Path) -> Iterator[Any]:
    if request.param == "websocket":
        yield request.getfixturevalue("chat_server")
        return
    server = started_for("sse", "search", log_dir, server_environment(server_database.url))
    yield server
    server.close()


@each_transport_and_size("search_server", "chat-search")
def test_a_search_opens_the_conversation_at_the_message(
    search_server,
    new_page,  # noqa: F811
    name,
    options,
):
    user, other = create_user(search_server.env), create_user(search_server.env)
    conversation(search_server.env, other[0], word_at=5)  # shares the word: never shown
    page = new_page(**options)
    log_in(page, search_server.url, user)  # before: it opens the person's newest conversation
    mine = conversation(search_server.env, user[0], word_at=3)
    toggle = page.locator("#sidebar-toggle")
    if toggle.is_visible():
        toggle.click()

    box = page.get_by_role("searchbox", name="Search conversations")
    box.fill("zeppel")
    results = page.locator("#search-results a")
    results.first.wait_for()
    assert results.count() == 1
    assert page.locator("#search-status").text_content() == "Results: 1"
    assert results.first.locator("mark").all_text_contents() == ["zeppel"]
    snippet = results.first.locator(".search-snippet").text_content()
    assert snippet == "question 3 about the <i>zeppelin</i>"  # text, never HTML
    assert axe_violations(page) == []
    docs_screenshot(page, name)

    box.press("ArrowDown")
    assert page.evaluate("document.activeElement.classList.contains('search-hit')")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/c/{mine}/#item-\d+$"))
    wait_connected(page)
    target = page.locator(".message.search-target")
    target.wait_for(timeout=30_000)  # older pages were asked for until it was shown
    assert "zeppelin" in target.locator(".text").text_content()
    assert target.is_visible()

    box = page.get_by_role("searchbox", name="Search conversations")
    if not box.is_visible():
        page.locator("#sidebar-toggle").click()
    box.fill("nothing-like-this")
    page.locator("#search-status", has_text="Nothing found.").wait_for()
    box.press("Escape")
    assert box.input_value() == ""
