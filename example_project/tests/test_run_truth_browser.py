"""A stopped reply survives a reload: the chat page shows its text and that it stopped."""

from __future__ import annotations

import pytest

from example_project.tests.conftest import log_in, wait_connected
from example_project.tests.test_e2e_browser import wait_for_reply_length

pytestmark = pytest.mark.browser

REPLY = ".message-assistant .text"


def test_a_stopped_reply_is_shown_with_its_status_after_a_reload(browser, chat_server, chat_user):
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    context.set_default_timeout(20_000)
    try:
        page = context.new_page()
        log_in(page, chat_server.url, chat_user)
        page.get_by_label("Message", exact=True).fill("Tell me a long story")
        page.keyboard.press("Enter")
        page.wait_for_selector(".message-assistant.is-streaming")
        wait_for_reply_length(page, 40)
        page.get_by_role("button", name="Stop", exact=True).click()
        page.wait_for_selector(".message-assistant .note:text('Stopped.')")
        streamed = page.locator(REPLY).last.text_content()
        assert streamed

        page.reload()
        wait_connected(page)
        stopped = page.locator('.message-assistant[data-status="cancelled"]')
        stopped.wait_for()
        # After the reload the note is rendered Markdown (a paragraph): the same text,
        # give or take the white space at its end.
        assert str(stopped.locator(".text").text_content()).strip() == streamed.strip()
        assert stopped.locator(".note").text_content() == "Stopped."
        assert page.locator(".message-user .text").all_text_contents() == ["Tell me a long story"]
    finally:
        context.close()
