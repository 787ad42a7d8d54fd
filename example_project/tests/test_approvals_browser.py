"""Approve and reject a tool call in the example chat, in headless Chromium.

The demo agent's ``send_company_email`` tool needs approval: the run pauses, the chat
shows the request with Approve and Reject, and the outcome stays in the transcript after a
reload. ``SAVE_DOCS_SCREENSHOT=1`` also refreshes ``docs/images/chat-approval.png``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from example_project.tests.conftest import log_in, wait_connected
from example_project.tests.servers import REPO_ROOT
from example_project.tests.test_e2e_browser import ASSISTANT, send, wait_idle
from tests.browser import save_screenshot

pytestmark = pytest.mark.browser

REQUEST = "[data-kind='approval']"


@pytest.fixture
def chat_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(20_000)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: problems.append(message.text) if message.type == "error" else None,
    )
    yield page
    context.close()
    assert problems == []  # no script error, no Content-Security-Policy violation


def ask_for_email(page: Any, text: str) -> Any:
    before = page.locator(REQUEST).count()
    send(page, text)
    request = page.locator(REQUEST).nth(before)
    request.wait_for()
    # The run waits: it holds the conversation, and Stop would reject the call.
    page.wait_for_selector("#stop-button:not([hidden])")
    assert page.locator("#send-button").is_hidden()
    return request


def wait_for_reply(page: Any, start: str) -> None:
    """Wait for an assistant reply that starts with ``start``, streaming or rendered.

    A finished reply is Markdown rendered into ``<p>`` elements, so the match is on the
    reply's whole text, not on the smallest element holding it (``:text-matches``).
    """
    pattern = re.compile("^\\s*" + re.escape(start))
    page.locator(f"{ASSISTANT} .text", has_text=pattern).wait_for()


def test_approve_and_reject_a_tool_call(chat_server, chat_user, chat_page):
    page = chat_page
    log_in(page, chat_server.url, chat_user)

    request = ask_for_email(page, "Please email everyone about the fire drill on Friday")
    assert request.locator(".approval-title").text_content() == (
        "Approval needed: send_company_email"
    )
    # The first message created the conversation: the sidebar lists it while the run waits.
    page.wait_for_selector(
        "#conversation-list a:has-text('Please email everyone about the fire drill')"
    )
    # What the tool does (its docstring), and its arguments as names and values.
    assert request.locator(".approval-description").text_content() == (
        "Email every employee of the company. Needs the user's approval."
    )
    assert request.locator(".arguments dt").all_text_contents() == ["subject"]
    assert request.locator(".arguments dd").all_text_contents() == ["The fire drill on Friday"]
    path = save_screenshot(page, "chat-approval")
    if os.environ.get("SAVE_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(path, REPO_ROOT / "docs" / "images" / "chat-approval.png")
    request.get_by_role("button", name="Approve").click()
    page.wait_for_selector(f"{REQUEST}[data-decision='approved']")
    wait_for_reply(page, "Done: the email")
    wait_idle(page)

    request = ask_for_email(page, "Announce the cake in the kitchen")
    page.reload()  # a waiting call after a reload: from the history frame, described alike
    wait_connected(page)
    request = page.locator(REQUEST).last
    request.locator(".approval-description").wait_for()
    assert request.locator(".arguments dd").all_text_contents() == [
        "Announce the cake in the kitchen"
    ]
    request.get_by_role("button", name="Reject").click()
    page.wait_for_selector(f"{REQUEST}[data-decision='rejected']")
    wait_for_reply(page, "You rejected the email")
    wait_idle(page)

    page.reload()
    wait_connected(page)
    page.wait_for_selector("details.tool-output")
    outputs = page.locator("details.tool-output summary").all_text_contents()
    label = "Tool output (send_company_email): "
    assert outputs[0].startswith(label + "the email “The fire drill on Friday” went out")
    assert outputs[1] == label + "Tool execution was not approved."
    replies = page.locator(f"{ASSISTANT} .text").all_text_contents()
    assert replies[-1].strip() == "You rejected the email, so nothing was sent."
    assert page.locator(REQUEST).count() == 0  # nothing is pending any more
    save_screenshot(page, "chat-approval-after-reload")
