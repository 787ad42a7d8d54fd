"""'Branch from here' in the packaged chat, in headless Chromium: a new conversation holds
exactly what came before the message, offers the message again, and goes its own way."""

from __future__ import annotations

import re

import pytest

from example_project.tests.conftest import log_in, wait_history
from example_project.tests.servers import query
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    CONFIRMED,
    USER,
    desktop_and_phone,
    docs_screenshot,
    new_page,
)
from example_project.tests.test_e2e_browser import send, wait_idle
from tests.browser import axe_violations

pytestmark = pytest.mark.browser

PAYLOADS = (
    "SELECT i.payload FROM django_agent_sessions_sessionitem i "
    "JOIN django_agent_sessions_agentsession s ON s.id = i.session_id "
    "WHERE s.session_id = %s ORDER BY i.id"
)


def _session_id(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


@desktop_and_phone("chat-branch")
def test_a_branch_from_a_message_goes_its_own_way(
    chat_server,
    chat_user,
    new_page,  # noqa: F811
    name,
    options,
):
    page = new_page(**options)
    log_in(page, chat_server.url, chat_user)
    for text in ("Please calculate (12 + 30) * 2", "Hello there", "And a third thing"):
        send(page, text)
        wait_idle(page)
    original = page.url
    page.reload()  # stored messages have their ids: each may be branched from
    wait_history(page)

    page.locator(USER).nth(1).get_by_role("button", name="Branch from here").click()
    page.wait_for_url(lambda url: url != original and re.search(r"/c/[0-9a-f]{32}/$", url))
    wait_history(page)
    box = page.get_by_label("Message", exact=True)
    assert box.input_value() == "Hello there"  # offered again, to change first
    assert page.locator(USER).all_text_contents()[0].count("Please calculate") == 1
    assert page.locator(USER).count() == 1
    assert page.locator('[data-kind="tool_call"]').count() == 1
    heading = page.locator("#conversation-title")
    assert heading.text_content() == "Please calculate (12 + 30) * 2 (branch)"
    origin = page.locator(".branched-from a")
    assert origin.text_content() == "Please calculate (12 + 30) * 2"
    assert origin.get_attribute("href").endswith(f"/c/{_session_id(original)}/")
    copied = query(chat_server.env, PAYLOADS, (_session_id(page.url),))
    assert copied == query(chat_server.env, PAYLOADS, (_session_id(original),))[: len(copied)]
    assert axe_violations(page) == []
    docs_screenshot(page, name)

    box.fill("Hello there, another way")
    box.press("Enter")
    page.locator(CONFIRMED).nth(1).wait_for()
    wait_idle(page)
    assert page.locator(USER).count() == 2
    page.goto(original)  # the original is as it was
    wait_history(page)
    page.locator(USER).nth(2).wait_for()
    assert page.locator(USER).count() == 3
