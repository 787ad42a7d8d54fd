"""'Branch from here' in the packaged chat, in headless Chromium, on both transports.

A conversation of 40 messages, the first of which needed an approval and the second a
tool call, is branched from its 3rd message: the new conversation holds byte for byte
the stored items that came before that message and shows exactly them, offers the
message again, a run on the copied history succeeds, and both conversations go on
without each other's messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from example_project.tests.conftest import log_in, wait_history
from example_project.tests.servers import (
    ServerDatabase,
    create_user,
    query,
    server_environment,
)
from example_project.tests.sizes import each_transport_and_size
from example_project.tests.test_approvals_browser import REQUEST, ask_for_email
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    REPLY,
    USER,
    docs_screenshot,
    new_page,
)
from example_project.tests.test_e2e_browser import send, wait_idle
from example_project.tests.transport_servers import started_for
from tests.browser import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.long(80)]

EMAIL = "Please email everyone about the fire drill on Friday"
CALCULATION = "Please calculate (12 + 30) * 2"
# Neither a tool's nor a story's words: the demo model answers these at once, in text.
MESSAGES = [EMAIL, CALCULATION] + [f"Thing number {n}" for n in range(3, 41)]
AT = 2  # the 3rd message: the branch carries the approved email and the calculation

PAYLOADS = (
    "SELECT i.role, i.payload FROM django_agent_sessions_sessionitem i "
    "JOIN django_agent_sessions_agentsession s ON s.id = i.session_id "
    "WHERE s.session_id = %s ORDER BY i.id"
)
# What the page shows of each item: its kind, a message's role, and its text.
SHOWN = """() => Array.from(document.querySelectorAll('#transcript [data-kind]')).map((node) => [
  node.dataset.kind, node.dataset.role || '',
  (node.querySelector('.text, summary') || node).textContent.trim()])"""


@pytest.fixture(scope="module", params=["websocket", "sse"])
def branch_server(request: Any, server_database: ServerDatabase, log_dir: Path) -> Iterator[Any]:
    # 40 messages and more in well under a minute: past the default rate limit (30 a
    # minute). The replies stream without the usual pause between words, which would
    # make the 40 turns take a minute of their own.
    env = server_environment(server_database.url, RATE_LIMIT="120/m", DEMO_MODEL_DELAY="0")
    server = started_for(request.param, "branch", log_dir, env)
    yield server
    server.close()


def _session_id(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def stored(server: Any, url: str) -> list[tuple[str, str]]:
    """The conversation's stored items, (role, payload) in order, from the database."""
    return [(role, payload) for role, payload in query(server.env, PAYLOADS, (_session_id(url),))]


def before_message(items: list[Any], n: int, is_user: Any) -> list[Any]:
    """``items`` up to (not including) the ``n``-th (from 0) user message."""
    users = [index for index, item in enumerate(items) if is_user(item)]
    return items[: users[n]]


def texts(page: Any) -> list[str]:
    """The texts of the user's messages on the page."""
    return [text.strip() for text in page.locator(f"{USER} .text").all_text_contents()]


def open_conversation(page: Any, url: str) -> None:
    page.goto(url)
    wait_history(page)


def converse(page: Any) -> None:
    """The 40 messages, each once the previous reply is over; the email approved."""
    request = ask_for_email(page, MESSAGES[0])
    request.get_by_role("button", name="Approve").click()
    page.wait_for_selector(f"{REQUEST}[data-decision='approved']")
    wait_idle(page)
    for text in MESSAGES[1:]:
        send(page, text)
        wait_idle(page)


def answer(page: Any, text: str) -> str:
    """Send ``text`` in the conversation shown; the demo model's reply to it."""
    replies = page.locator(REPLY).count()
    send(page, text)
    wait_idle(page)
    reply = page.locator(f"{REPLY} .text").nth(replies)
    return str(reply.text_content()).strip()


@each_transport_and_size("branch_server", "chat-branch")
def test_a_branch_from_the_third_of_forty_messages_goes_its_own_way(
    branch_server,
    new_page,  # noqa: F811
    name,
    options,
):
    server = branch_server
    page = new_page(**options)
    log_in(page, server.url, create_user(server.env))
    converse(page)
    original = page.url
    open_conversation(page, original)  # stored messages have their ids: each may be branched
    assert texts(page) == MESSAGES
    title = page.locator("#conversation-title").text_content()
    everything = page.evaluate(SHOWN)
    shown = before_message(everything, AT, lambda node: node[:2] == ["message", "user"])
    turn = ["message", "reasoning", "tool_call", "tool_output", "message"]
    assert [node[0] for node in shown] == turn + turn  # the email's and the calculation's
    assert page.locator(REQUEST).count() == 0  # nothing waits for an approval any more
    items = stored(server, original)
    assert [role for role, _ in items].count("user") == len(MESSAGES)

    page.locator(USER).nth(AT).get_by_role("button", name="Branch from here").click()
    page.wait_for_url(lambda url: url != original and re.search(r"/c/[0-9a-f]{32}/$", url))
    wait_history(page)
    branch = page.url
    copied = stored(server, branch)
    assert copied == before_message(items, AT, lambda item: item[0] == "user")  # byte for byte
    assert page.evaluate(SHOWN) == shown  # exactly those, as the original showed them
    box = page.get_by_label("Message", exact=True)
    assert box.input_value() == MESSAGES[AT]  # offered again, to send or change first
    assert page.locator("#conversation-title").text_content() == f"{title} (branch)"
    origin = page.locator(".branched-from a")
    assert origin.text_content() == title
    assert origin.get_attribute("href").endswith(f"/c/{_session_id(original)}/")
    assert axe_violations(page) == []
    docs_screenshot(page, name)

    # A run on the copied history: the model is given both copied messages and the new one.
    reply = answer(page, "In the branch, something else")
    assert "You said: “In the branch, something else”" in reply
    assert "You have sent me 3 messages" in reply
    assert stored(server, branch)[: len(copied)] == copied

    open_conversation(page, original)  # the original is as it was, and goes on
    assert texts(page) == MESSAGES
    reply = answer(page, "In the original, one more")
    assert "You have sent me 41 messages" in reply
    assert texts(page) == [*MESSAGES, "In the original, one more"]
    assert stored(server, original)[: len(items)] == items

    open_conversation(page, branch)  # the branch never shows the original's new message
    users = texts(page)
    assert users == [*MESSAGES[:AT], "In the branch, something else"]
    assert page.evaluate(SHOWN)[: len(shown)] == shown


def test_a_message_just_sent_is_branched_from_without_a_reload(branch_server, new_page):  # noqa: F811
    """The run's end names the message as stored (``user_item_id``): the page offers
    "Branch from here" on it at once, as it would after a reload."""
    server = branch_server
    page = new_page()
    log_in(page, server.url, create_user(server.env))
    answer(page, MESSAGES[2])
    answer(page, MESSAGES[3])  # both sent on this page, never reloaded
    original = page.url
    just_sent = page.locator(USER).nth(1)
    # Shown by the same frame that ends the run (and so brings Send back): no wait.
    assert just_sent.get_by_role("button", name="Branch from here").is_visible()
    assert page.locator(USER).nth(0).get_by_role("button", name="Branch from here").is_visible()

    just_sent.get_by_role("button", name="Branch from here").click()
    page.wait_for_url(lambda url: url != original and re.search(r"/c/[0-9a-f]{32}/$", url))
    wait_history(page)
    assert page.get_by_label("Message", exact=True).input_value() == MESSAGES[3]
    assert texts(page) == [MESSAGES[2]]  # what came before the message, and only that
    first_turn = before_message(stored(server, original), 1, lambda item: item[0] == "user")
    assert stored(server, page.url) == first_turn
