"""The chat page end to end: headless Chromium against a live daphne running the example.

The server is a real ``daphne example_project.asgi:application`` process in production
mode on the test database, with the offline demo model at a fast pace
(``DEMO_MODEL_DELAY=0.01``). Screenshots land in the test artifacts; ``docs/images/``
is refreshed by test_chat_ui_browser.py.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from example_project.tests.conftest import a_failed_reconnection, log_in, wait_connected
from example_project.tests.servers import create_user
from tests.browser import save_screenshot

pytestmark = pytest.mark.browser

ASSISTANT = ".message-assistant"
STREAMING = ".message-assistant.is-streaming"


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(20_000)
    yield context
    context.close()


@pytest.fixture
def page(context: Any, console_problems: list[str]) -> Iterator[Any]:
    page, problems = context.new_page(), console_problems
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def on_console(message: Any) -> None:
        if message.type == "error":
            problems.append(f"console {message.type}: {message.text}")

    page.on("console", on_console)
    page.on("dialog", lambda dialog: dialog.accept())
    yield page
    # No script error and no Content-Security-Policy violation on any page of the test.
    assert problems == []


CONFIRMED = ".message-user:not(.is-pending)"


def send(page: Any, text: str) -> None:
    """Type and send a message; returns once the server has started the run."""
    confirmed = page.locator(CONFIRMED).count()
    box = page.get_by_label("Message", exact=True)
    box.fill(text)
    box.press("Enter")
    # The server echoes the user's message right after run.started.
    page.locator(CONFIRMED).nth(confirmed).wait_for()


def last_assistant_text(page: Any) -> str:
    return str(page.locator(f"{ASSISTANT} .text").last.text_content())


def wait_for_reply_length(page: Any, minimum: int, timeout: float = 20.0) -> None:
    """Until the last assistant message has more than ``minimum`` characters.

    (A polling loop, because the page's CSP rightly forbids wait_for_function's eval.)
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if page.locator(ASSISTANT).count() and len(last_assistant_text(page)) > minimum:
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"the reply did not grow past {minimum} characters in {timeout}s")


def wait_idle(page: Any) -> None:
    """Until no run is active: Send is back and Stop is hidden."""
    page.wait_for_selector("#stop-button", state="hidden")
    page.wait_for_selector("#send-button:not([disabled])")


def test_chat_streams_replies_shows_tool_calls_and_keeps_history(chat_server, page):
    # Named like bin/run's login, because this test takes the documentation's screenshot.
    log_in(page, chat_server.url, create_user(chat_server.env, "demo"))
    assert page.evaluate("document.activeElement.id") == "message", "focus starts in the box"

    send(page, "Hello, demo agent!")
    page.wait_for_selector(STREAMING)  # seen while the words arrive
    wait_idle(page)
    reply = last_assistant_text(page)
    assert reply.startswith("You said: “Hello, demo agent!”.")
    assert "You have sent me 1 message" in reply
    # The sidebar and the heading got the title derived from the first message.
    page.wait_for_selector("#conversation-list a[aria-current=page]:text('Hello, demo agent!')")
    assert page.locator("#conversation-title").text_content() == "Hello, demo agent!"

    send(page, "What is (12 + 30) * 2?")
    call = page.locator("details.tool-call")
    call.wait_for()
    assert call.locator("summary").text_content() == "Tool call: calculate"
    assert not call.locator("pre").is_visible(), "collapsed until opened"
    call.locator("summary").click()
    assert '"expression": "(12 + 30) * 2"' in str(call.locator("pre").text_content())
    page.wait_for_selector("details.tool-output summary:text('Tool output (calculate): 84')")
    page.wait_for_selector(
        f"{ASSISTANT} .text.markdown p:text-is('The calculator says (12 + 30) * 2 = 84.')"
    )
    wait_idle(page)
    # (docs/images/chat.png is made by test_chat_ui_browser.py.)
    save_screenshot(page, "chat-e2e")

    page.reload()
    wait_connected(page)
    page.wait_for_selector("details.tool-call")
    texts = [text.strip() for text in page.locator(".message .text").all_text_contents()]
    assert texts[0] == "Hello, demo agent!"
    assert texts[2] == "What is (12 + 30) * 2?"
    assert texts[-1] == "The calculator says (12 + 30) * 2 = 84."
    assert page.locator("details.reasoning").count() == 1
    save_screenshot(page, "chat-after-reload")


def test_model_output_is_shown_as_text_never_as_html(chat_server, chat_user, page):
    log_in(page, chat_server.url, chat_user)
    send(page, "<img src=x onerror=alert(1)><b>bold</b>")
    wait_idle(page)
    assert page.locator(".message img, .message b").count() == 0
    assert "<b>bold</b>" in last_assistant_text(page)


def test_stop_ends_a_long_reply(chat_server, chat_user, page):
    log_in(page, chat_server.url, chat_user)
    send(page, "Tell me a long story")
    stop = page.get_by_role("button", name="Stop", exact=True)
    stop.wait_for()
    wait_for_reply_length(page, 100)
    stop.click()
    page.wait_for_selector(f"{ASSISTANT} .note:text('Stopped.')")
    wait_idle(page)
    stopped_at = len(last_assistant_text(page))
    assert 100 < stopped_at < 3000, "the story is ~5,800 characters"
    page.wait_for_timeout(300)
    assert len(last_assistant_text(page)) == stopped_at, "nothing arrives after Stop"

    send(page, "Are you still there?")  # the socket stays usable
    page.wait_for_selector(f"{ASSISTANT} .text:has-text('Are you still there?')")
    save_screenshot(page, "chat-stopped")


def test_a_reload_mid_run_picks_the_run_up_again(chat_server, chat_user, page):
    log_in(page, chat_server.url, chat_user)
    send(page, "Tell me a long story please")
    wait_for_reply_length(page, 200)
    page.reload()
    wait_connected(page)
    # The run is still going: Stop is offered and the reply keeps growing.
    page.get_by_role("button", name="Stop", exact=True).wait_for()
    assert page.locator(".message-user .text").first.text_content() == (
        "Tell me a long story please"
    )
    page.wait_for_selector(STREAMING)
    before = len(last_assistant_text(page))
    wait_for_reply_length(page, before + 100)
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_idle(page)


def test_a_second_tab_sees_the_same_run(chat_server, chat_user, context, page):
    log_in(page, chat_server.url, chat_user)
    second = context.new_page()
    second.goto(page.url)
    wait_connected(second)

    send(page, "What is 6 * 7?")
    for tab in (page, second):
        tab.wait_for_selector(".message-user .text:text-is('What is 6 * 7?')")
        tab.wait_for_selector("details.tool-call summary:text('Tool call: calculate')")
        tab.wait_for_selector(
            f"{ASSISTANT} .text.markdown p:text-is('The calculator says 6 * 7 = 42.')"
        )
    wait_idle(second)
    save_screenshot(second, "chat-second-tab")

    # A reply being written in one tab can be stopped from the other. (Stopped before
    # its first text, a run's "Stopped." is a note of its own, not in a reply.)
    send(page, "Tell me a long story")
    second.wait_for_selector(f"{ASSISTANT}.is-streaming")
    second.get_by_role("button", name="Stop").click()
    for tab in (page, second):
        tab.wait_for_selector(f"{ASSISTANT} .note:text('Stopped.')")
        wait_idle(tab)
    second.close()


def test_clear_empties_the_conversation(chat_server, chat_user, page):
    log_in(page, chat_server.url, chat_user)
    send(page, "Remember the word pineapple")
    wait_idle(page)
    page.get_by_role("button", name="Clear", exact=True).click()
    page.wait_for_selector(".empty-hint")
    assert page.locator(".message").count() == 0

    page.reload()
    wait_connected(page)
    page.wait_for_selector(".empty-hint")
    assert page.locator(".message").count() == 0
    # The conversation keeps its title and its place in the sidebar.
    assert page.locator("#conversation-list a[aria-current=page]").text_content() == (
        "Remember the word pineapple"
    )

    page.get_by_role("link", name="Admin").click()
    page.get_by_role("heading", name="Site administration").wait_for()


def test_errors_are_shown_and_the_chat_goes_on(chat_server, chat_user, page):
    log_in(page, chat_server.url, chat_user)
    send(page, "Please simulate an error")
    banner = page.get_by_role("alert")
    banner.wait_for()
    assert str(banner.text_content()).startswith("The agent failed")
    page.wait_for_selector(".run-error")
    wait_idle(page)

    send(page, "Hello again")
    page.wait_for_selector(f"{ASSISTANT} .text:has-text('Hello again')")
    assert page.locator("#error-banner").is_hidden()


def test_reconnects_after_the_server_restarts(chat_server, chat_user, page, console_problems):
    log_in(page, chat_server.url, chat_user)
    chat_server.stop()
    page.wait_for_selector('#connection-status[data-state="reconnecting"]')
    assert page.locator("#send-button").is_disabled()
    chat_server.start()
    wait_connected(page)
    send(page, "Back online?")
    page.wait_for_selector(f"{ASSISTANT} .text:has-text('Back online?')")
    # The page's retries while the server was down are logged as errors: expected here.
    console_problems[:] = [p for p in console_problems if not a_failed_reconnection(p)]


def test_phone_sized_screen(browser, chat_server, chat_user):
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    context.set_default_timeout(20_000)
    page = context.new_page()
    try:
        log_in(page, chat_server.url, chat_user)
        sidebar = page.locator("#sidebar")
        toggle = page.get_by_role("button", name="Conversations", exact=True)
        assert sidebar.is_hidden()
        toggle.click()
        assert toggle.get_attribute("aria-expanded") == "true"
        assert page.get_by_role("link", name="New conversation").is_visible()
        page.keyboard.press("Escape")
        assert sidebar.is_hidden()

        send(page, "What time is it?")
        page.wait_for_selector(f"{ASSISTANT} .text:has-text('The clock tool says it is')")
        box = page.get_by_label("Message", exact=True).bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 390
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        save_screenshot(page, "chat-phone")
    finally:
        context.close()


def test_keyboard_use(chat_server, chat_user, page):
    log_in(page, chat_server.url, chat_user)
    box = page.get_by_label("Message", exact=True)
    box.type("first line")
    box.press("Shift+Enter")
    box.type("second line")
    assert box.input_value() == "first line\nsecond line", "Shift+Enter adds a line"
    box.press("Enter")
    page.locator(CONFIRMED).first.wait_for()
    assert page.locator(".message-user .text").all_text_contents() == ["first line\nsecond line"]
    assert box.input_value() == ""
    assert page.evaluate("document.activeElement.id") == "message"
    wait_idle(page)

    page.keyboard.press("Shift+Tab")  # back from the box: reachable controls, in order
    name = "document.activeElement.getAttribute('aria-label') || document.activeElement.textContent"
    assert page.evaluate(name).strip() == "Bad reply", (
        "the last reply's actions come before the box"
    )
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(name).strip() == "Regenerate"
    assert re.search(r"/admin/", str(page.get_by_role("link", name="Admin").get_attribute("href")))
