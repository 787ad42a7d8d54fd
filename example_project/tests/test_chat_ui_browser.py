"""The packaged chat's features in a real browser, on the example project (daphne, demo model).

Markdown and its safety, copy buttons, edit and regenerate (checked through what the
demo model saw: it counts the user messages of the history it is given), conversation
management, keyboard use, the layout at 390 px and in dark mode, and an axe-core audit
of the chat and the admin transcript. ``SAVE_DOCS_SCREENSHOT=1`` also refreshes the
screenshots in docs/images/.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from example_project.tests.conftest import log_in, wait_connected
from example_project.tests.servers import REPO_ROOT, create_user
from example_project.tests.test_e2e_browser import send, wait_idle
from tests.browser import axe_violations, save_screenshot

pytestmark = pytest.mark.browser

USER = '[data-kind="message"][data-role="user"]'
REPLY = '[data-kind="message"][data-role="assistant"]'
CONFIRMED = f"{USER}:not(.is-pending)"


def docs_screenshot(page: Any, name: str) -> None:
    path = save_screenshot(page, name)
    if os.environ.get("SAVE_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(path, REPO_ROOT / "docs" / "images" / f"{name}.png")


@pytest.fixture
def new_page(browser: Any) -> Iterator[Any]:
    """Pages whose contexts bypass the CSP (so that axe can be injected, and so that the
    Markdown safety checks prove the renderer safe, not merely the policy), and that fail
    the test on any script error or dialog."""
    contexts: list[Any] = []
    problems: list[str] = []

    def make(**options: Any) -> Any:
        options.setdefault("viewport", {"width": 1280, "height": 800})
        context = browser.new_context(bypass_csp=True, **options)
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        context.set_default_timeout(20_000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("dialog", lambda dialog: _dialog(dialog, problems))
        return page

    yield make
    for context in contexts:
        context.close()
    assert problems == []


def _dialog(dialog: Any, problems: list[str]) -> None:
    if dialog.type != "confirm":
        problems.append(f"unexpected {dialog.type}: {dialog.message}")
    dialog.accept()


def conversation_ids(page: Any) -> list[str]:
    response = page.request.get(page.url.split("/c/")[0] + "/conversations/")
    return [row["id"] for row in response.json()["conversations"]]


def test_markdown_renders_with_copy_buttons(chat_server, chat_user, new_page):
    page = new_page()
    log_in(page, chat_server.url, chat_user)
    send(page, "Show me some Markdown")
    wait_idle(page)
    reply = page.locator(f"{REPLY} .text.markdown").last
    assert reply.locator("strong").first.text_content() == "Markdown"
    assert reply.locator("ul > li").count() == 3
    link = reply.locator("a[href='https://www.djangoproject.com/']")
    assert link.get_attribute("target") == "_blank"
    assert link.get_attribute("rel") == "noopener noreferrer nofollow"
    assert reply.locator("table td").first.text_content() == "current_time"
    code = reply.locator(".code-block pre code.language-python")
    assert "DjangoSession(" in str(code.text_content())

    reply.locator(".code-block").get_by_role("button", name="Copy code").click()
    page.wait_for_selector(".copy-code:text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == code.text_content()
    page.locator(REPLY).last.get_by_role("button", name="Copy", exact=True).click()
    assert page.evaluate("navigator.clipboard.readText()").startswith("Replies are **Markdown**")

    page.reload()  # the history frame carries the same rendered HTML
    wait_connected(page)
    page.locator(f"{REPLY} .text.markdown .code-block").wait_for()
    docs_screenshot(page, "chat-markdown")


@pytest.mark.parametrize(
    "attack",
    [
        "<script>window.__pwned = 1</script>",
        "<img src=x onerror='window.__pwned = 1'>",
        "[click me](javascript:window.__pwned=1)",
        '<a href="javascript:window.__pwned=1">click</a>',
    ],
)
def test_replies_with_html_or_script_run_nothing(chat_server, chat_user, new_page, attack):
    page = new_page()
    log_in(page, chat_server.url, chat_user)
    send(page, attack)  # the demo agent quotes it back
    wait_idle(page)
    reply = page.locator(REPLY).last
    assert attack.split(">")[0][:12] in str(reply.locator(".text").text_content())
    assert reply.locator("script, img, iframe, [onerror], [onclick]").count() == 0
    for anchor in reply.locator("a").all():
        href = str(anchor.get_attribute("href") or "")
        assert href.startswith(("http:", "https:", "mailto:")), href
        anchor.click()
    assert page.evaluate("window.__pwned") is None


def test_regenerate_and_edit_leave_exactly_the_new_turn(chat_server, chat_user, new_page):
    page = new_page()
    log_in(page, chat_server.url, chat_user)
    send(page, "first question")
    wait_idle(page)
    send(page, "second question")
    wait_idle(page)
    assert "You have sent me 2 messages" in str(page.locator(REPLY).last.text_content())

    # Regenerate: the last reply is replaced; the model saw the same two messages.
    old_reply = page.locator(REPLY).last.element_handle()
    page.locator(REPLY).last.get_by_role("button", name="Regenerate").click()
    old_reply.wait_for_element_state("hidden")  # taken back (removed), then asked again
    page.locator(REPLY).nth(1).wait_for()
    wait_idle(page)
    assert page.locator(USER).count() == 2
    assert page.locator(REPLY).count() == 2
    assert "You have sent me 2 messages" in str(page.locator(REPLY).last.text_content())

    # Edit: the last question is replaced, not added to.
    page.locator(USER).last.get_by_role("button", name="Edit").click()
    box = page.get_by_label("Message", exact=True)
    assert box.input_value() == "second question"
    box.fill("second question, edited")
    old_reply = page.locator(REPLY).last.element_handle()
    box.press("Enter")
    old_reply.wait_for_element_state("hidden")
    page.wait_for_selector(f"{REPLY} .text:has-text('second question, edited')")
    wait_idle(page)
    last = str(page.locator(REPLY).last.text_content())
    assert "You have sent me 2 messages" in last

    # What is stored is exactly that: reload and read the history the server sends.
    page.reload()
    wait_connected(page)
    page.locator(REPLY).nth(1).wait_for()
    texts = page.locator(f"{USER} .text").all_text_contents()
    assert texts == ["first question", "second question, edited"]
    assert page.locator(REPLY).count() == 2


def test_new_conversations_write_nothing_until_the_first_message(chat_server, chat_user, new_page):
    page = new_page()
    log_in(page, chat_server.url, chat_user)
    send(page, "keep me")
    wait_idle(page)
    before = conversation_ids(page)
    assert len(before) == 1
    for _ in range(3):
        page.get_by_role("link", name="New conversation").click()
        wait_connected(page)
    assert conversation_ids(page) == before
    # A socket to any random id: still nothing.
    page.goto(chat_server.url + "/c/not-a-real-conversation-yet/")
    wait_connected(page)
    assert conversation_ids(page) == before
    page.goto(chat_server.url + "/")
    assert page.url.endswith(f"/c/{before[0]}/"), "/ opens the latest real conversation"


def test_rename_delete_and_someone_elses_conversation(chat_server, chat_user, new_page):
    page = new_page()
    log_in(page, chat_server.url, chat_user)
    assert page.locator("#rename-button").is_hidden(), "nothing to rename before a message"
    send(page, "a conversation to rename")
    wait_idle(page)
    page.get_by_role("button", name="Rename", exact=True).click()
    title = page.get_by_label("Conversation title")
    title.fill("Renamed in the browser")
    title.press("Enter")
    page.wait_for_selector("#conversation-title:text('Renamed in the browser')")
    page.wait_for_selector("#conversation-list a[aria-current=page]:text('Renamed in the browser')")
    mine = page.url

    other = new_page()
    log_in(other, chat_server.url, create_user(chat_server.env))
    response = other.goto(mine)
    assert response is not None
    assert response.status == 404

    page.get_by_role("button", name="Delete", exact=True).click()  # the confirm() is accepted
    page.wait_for_url(lambda url: url != mine)
    assert re.fullmatch(r".*/c/[0-9a-f]{32}/", page.url)
    assert conversation_ids(page) == []
    assert page.goto(mine) is not None
    assert page.locator("#conversation-list a").count() == 0


def test_keyboard_escape_stops_and_focus_stays(chat_server, chat_user, new_page):
    page = new_page()
    log_in(page, chat_server.url, chat_user)
    box = page.get_by_label("Message", exact=True)
    height = box.bounding_box()["height"]
    box.fill("line\n" * 6 + "end")
    box.dispatch_event("input")
    assert box.bounding_box()["height"] > height * 2, "the composer grows with its text"

    send(page, "Tell me a long story")
    page.wait_for_selector(f"{REPLY}.is-streaming")
    page.keyboard.press("Escape")
    wait_idle(page)
    page.wait_for_selector(f'{REPLY}[data-status="cancelled"]')
    assert page.evaluate("document.activeElement.id") == "message"

    send(page, "Another long story")
    page.wait_for_selector(f"{REPLY}.is-streaming")
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_idle(page)
    assert page.evaluate("document.activeElement.id") == "message", "not <body> after Stop"


def admin_transcript(page: Any, server_url: str) -> None:
    page.goto(server_url + "/admin/django_agent_sessions/agentsession/")
    page.locator("#result_list tbody tr th a, #result_list tbody tr td a").first.click()
    page.wait_for_selector(".transcript, #transcript, [class*=transcript]")


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("chat", {"viewport": {"width": 1280, "height": 800}}),
        ("chat-dark", {"viewport": {"width": 1280, "height": 800}, "color_scheme": "dark"}),
        (
            "chat-phone",
            {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
        ),
    ],
)
def test_accessibility_and_screenshots(chat_server, new_page, name, options):
    page = new_page(**options)
    # Named like bin/run's login: this test takes the documentation's screenshots.
    log_in(page, chat_server.url, create_user(chat_server.env, f"demo-{name}"))
    send(page, "Show me some Markdown")
    wait_idle(page)
    send(page, "What is (12 + 30) * 2?")
    page.wait_for_selector(f"{REPLY} .text:has-text('84')")
    wait_idle(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= options["viewport"]["width"]
    assert axe_violations(page) == []
    docs_screenshot(page, name)

    if name == "chat":
        admin_transcript(page, chat_server.url)
        assert axe_violations(page) == []
        docs_screenshot(page, "admin-transcript")
        admin_list = chat_server.url + "/admin/django_agent_sessions/agentsession/"
        page.goto(admin_list)
        docs_screenshot(page, "admin-list")
