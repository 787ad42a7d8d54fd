"""What the packaged chat shows of a conversation's turns, against what is stored.

A stopped reply taken back by an edit or a regenerate stays gone after a reload; a new
conversation is titled and listed while its first reply streams; an edited first message
retitles it; a reply is rated with the keyboard alone, stored, and shown rated after a
reload; and a long conversation opens with its newest items, older ones paging in as the
user scrolls up, the view staying put.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from django_agent_sessions.item_views import describe
from example_project.tests.conftest import log_in, wait_connected
from example_project.tests.servers import create_user, manage, query
from example_project.tests.sizes import desktop_and_phone
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    CONFIRMED,
    REPLY,
    USER,
    docs_screenshot,
    new_page,
)
from example_project.tests.test_e2e_browser import send, wait_idle
from tests.browser import axe_violations, save_screenshot

pytestmark = pytest.mark.browser

STORED = (
    "SELECT i.payload FROM django_agent_sessions_sessionitem i "
    "JOIN django_agent_sessions_agentsession s ON s.id = i.session_id "
    "WHERE s.session_id = %s ORDER BY i.id"
)
RATINGS = (
    "SELECT f.item_id, f.rating, f.comment, f.tags FROM django_agent_sessions_feedback f "
    "JOIN django_agent_sessions_agentsession s ON s.id = f.session_id WHERE s.session_id = %s"
)
# Each message as the page shows it: role, the text it copies, and a run note's status.
SHOWN = """() => Array.from(document.querySelectorAll('#transcript [data-kind="message"]'))
  .map((message) => [message.dataset.role, message.copyText, message.dataset.status || ""])"""


def stored_messages(env: dict[str, str], session_id: str) -> list[list[str]]:
    views = [describe(json.loads(payload)) for (payload,) in query(env, STORED, (session_id,))]
    return [[view.role, view.text, ""] for view in views if view.kind == "message"]


def session_id_of(page: Any) -> str:
    return str(page.url.rstrip("/").rsplit("/", 1)[-1])


def watch_title(page: Any) -> None:
    """Record, when the heading changes, whether a reply was still streaming."""
    page.evaluate(
        """() => {
          window.__titled = [];
          new MutationObserver(() => window.__titled.push([
            document.getElementById("conversation-title").textContent,
            document.querySelector(".is-streaming") !== null,
          ])).observe(document.getElementById("conversation-title"), {childList: true});
        }"""
    )


def stop_a_long_story(page: Any, text: str) -> None:
    send(page, text)
    page.wait_for_selector(f"{REPLY}.is-streaming")
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_idle(page)
    page.wait_for_selector(f'{REPLY}[data-status="cancelled"]')


@pytest.mark.parametrize("redo", ["edit", "regenerate"])
def test_a_stopped_reply_goes_with_its_turn(chat_server, chat_user, new_page, redo):  # noqa: F811
    page = new_page()
    log_in(page, chat_server.url, chat_user)
    watch_title(page)
    stop_a_long_story(page, "tell me a long story")
    # Titled and listed while the first reply streamed, not once it ended.
    assert ["tell me a long story", True] in page.evaluate("window.__titled")
    page.wait_for_selector("#conversation-list a[aria-current=page]:text('tell me a long story')")

    if redo == "edit":
        page.locator(USER).last.get_by_role("button", name="Edit").click()
        box = page.get_by_label("Message", exact=True)
        box.fill("hello")
        box.press("Enter")
        page.locator(f"{CONFIRMED}:has-text('hello')").wait_for()
        wait_idle(page)
        page.wait_for_selector("#conversation-title:text-is('hello')")
    else:
        page.locator(REPLY).last.get_by_role("button", name="Regenerate").click()
        page.wait_for_selector(f"{REPLY}.is-streaming")
        page.get_by_role("button", name="Stop", exact=True).click()
        wait_idle(page)

    page.reload()
    wait_connected(page)
    page.locator(USER).first.wait_for()
    shown = page.evaluate(SHOWN)
    stored = stored_messages(chat_server.env, session_id_of(page))
    assert [message for message in shown if not message[2]] == stored
    notes = [message for message in shown if message[2]]
    if redo == "edit":
        assert notes == []
        assert [role for role, _text, _status in stored] == ["user", "assistant"]
        assert page.locator("#conversation-title").text_content() == "hello"
    else:
        # Only the regenerated run's own note: the first one went with its turn.
        assert stored == [["user", "tell me a long story", ""]]
        assert [status for _role, _text, status in notes] == ["cancelled"]
        assert shown[-1][2] == "cancelled"
    save_screenshot(page, f"chat-stopped-then-{redo}")


def focused(page: Any) -> str:
    return str(page.evaluate("document.activeElement.getAttribute('aria-label') || ''"))


@desktop_and_phone("chat-rating")
def test_a_reply_is_rated_with_the_keyboard_and_stays_rated(
    chat_server,
    chat_user,
    new_page,  # noqa: F811
    name,
    options,
):
    page = new_page(**options)
    log_in(page, chat_server.url, chat_user)
    send(page, "What is (12 + 30) * 2?")
    wait_idle(page)
    reply = page.locator(REPLY).last
    bad = reply.get_by_role("button", name="Bad reply")
    assert bad.get_attribute("aria-pressed") == "false"  # run.completed gave its item id
    page.keyboard.press("Shift+Tab")  # from the message box back to the reply's last button
    page.keyboard.press("Shift+Tab")
    assert focused(page) == "Good reply"
    page.keyboard.press("Enter")  # a thumb up, saved at once
    page.wait_for_selector(f"{REPLY} .thumb.up[aria-pressed='true']")
    assert [row[1] for row in query(chat_server.env, RATINGS, (session_id_of(page),))] == [1]
    page.keyboard.press("Escape")  # no details this time
    page.locator(".rating-form").wait_for(state="detached")
    page.keyboard.press("Tab")
    assert focused(page) == "Bad reply"
    page.keyboard.press("Enter")  # changed to down; the form for the details opens
    page.wait_for_selector(f"{REPLY} .thumb.down[aria-pressed='true']")
    assert page.evaluate("document.activeElement.name") == "comment"
    page.keyboard.type("The sum is right, the wording is not.")
    page.keyboard.press("Tab")
    page.keyboard.press("Space")  # the first tag: inaccurate
    assert page.locator("#announcer").text_content() == "Marked as a bad reply."
    assert page.evaluate("document.documentElement.scrollWidth") <= options["viewport"]["width"]
    assert axe_violations(page) == []
    docs_screenshot(page, name)
    for _tab in range(8):  # past the other tags, to Save
        if page.evaluate("document.activeElement.textContent") == "Save":
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.locator(".rating-form").wait_for(state="detached")
    assert focused(page) == "Bad reply", "the focus is back on the thumb"
    page.wait_for_selector("#announcer:text('Your feedback was saved.')")
    item_id = int(str(reply.get_attribute("data-item-id")))
    comment = "The sum is right, the wording is not."
    rows = query(chat_server.env, RATINGS, (session_id_of(page),))
    assert rows == [(item_id, -1, comment, ",inaccurate,")]

    page.reload()
    wait_connected(page)
    reply.locator(".thumb.down[aria-pressed='true']").wait_for()
    assert reply.locator(".thumb.up").get_attribute("aria-pressed") == "false"
    # The pressed thumb opens the details again, as saved; Escape closes them, unchanged.
    reply.get_by_role("button", name="Bad reply").press("Enter")
    assert page.get_by_label("What was good or bad? (optional)").input_value() == comment
    assert page.get_by_role("checkbox", name="inaccurate").is_checked()
    page.keyboard.press("Escape")
    page.locator(".rating-form").wait_for(state="detached")
    assert focused(page) == "Bad reply"
    assert query(chat_server.env, RATINGS, (session_id_of(page),)) == rows


LONG = 5000  # items: 2,500 turns


def long_conversation(env: dict[str, str], owner: str) -> str:
    session_id = f"long-{time.monotonic_ns()}"
    manage(
        env,
        "shell",
        "-c",
        "from asgiref.sync import async_to_sync\n"
        "from django.contrib.auth import get_user_model\n"
        "from django_agent_sessions import DjangoSession\n"
        f"owner = get_user_model().objects.get(username={owner!r})\n"
        "items = []\n"
        f"for n in range({LONG // 2}):\n"
        "    items.append({'role': 'user', 'content': f'question {n}'})\n"
        "    items.append({'type': 'message', 'role': 'assistant', 'status': 'completed',\n"
        "        'id': f'msg_{n}', 'content': [{'type': 'output_text',\n"
        "        'text': f'answer {n}', 'annotations': []}]})\n"
        f"async_to_sync(DjangoSession({session_id!r}, owner=owner).add_items)(items)\n",
    )
    return session_id


def test_a_long_conversation_pages_in_as_you_scroll_up(chat_server, new_page):  # noqa: F811
    user = create_user(chat_server.env)
    page = new_page()
    log_in(page, chat_server.url, user)
    session_id = long_conversation(chat_server.env, user[0])
    frames: list[str] = []
    page.on(
        "websocket", lambda socket: socket.on("framereceived", lambda data: frames.append(data))
    )
    page.goto(f"{chat_server.url}/c/{session_id}/")
    wait_connected(page)
    page.locator(f"{USER}:has-text('question {LONG // 2 - 1}')").wait_for()
    shown_at = page.evaluate("performance.getEntriesByName('das:history-shown')[0].startTime")
    history = next(frame for frame in frames if '"type":"history"' in frame.replace(" ", ""))
    print(
        f"\n{LONG} items: history frame {len(history.encode()):,} bytes, "
        f"{len(json.loads(history)['items'])} items; shown {shown_at:.0f} ms after navigation"
    )
    first = len(json.loads(history)["items"])
    assert first == 500  # HISTORY_LIMIT: the newest items only
    assert page.locator('#transcript [data-kind="message"]').count() == first
    assert page.locator(".load-older").is_visible()

    # Scrolling up asks for the page before: it lands above, the view does not move.
    oldest = page.locator(USER).first
    assert oldest.locator(".text").text_content() == f"question {(LONG - first) // 2}"
    handle = oldest.element_handle()
    page.evaluate("document.getElementById('transcript').scrollTop = 0")
    top_before = handle.bounding_box()["y"]
    page.wait_for_function(
        f"document.querySelectorAll('#transcript [data-kind=\"message\"]').length === {2 * first}"
    )
    assert abs(handle.bounding_box()["y"] - top_before) < 2, "the view stayed where it was"
    save_screenshot(page, "chat-long-conversation")

    # The button pages too (keyboard users), down to the very first message.
    while page.locator(".load-older").is_visible():
        count = page.locator('#transcript [data-kind="message"]').count()
        # A DOM click (what Enter does): scrolling up may be paging in meanwhile, which
        # moves the button under a pointer; a click while a page loads does nothing.
        page.locator(".load-older").evaluate("button => button.click()")
        page.wait_for_function(
            "n => document.querySelectorAll('#transcript [data-kind=\"message\"]').length > n",
            arg=count,
        )
        page.evaluate("document.getElementById('transcript').scrollTop = 600")
    texts = page.locator(f"{USER} .text").all_text_contents()
    assert texts[:2] == ["question 0", "question 1"]
    assert len(texts) == LONG // 2
