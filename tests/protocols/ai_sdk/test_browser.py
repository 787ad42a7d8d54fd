"""A React page on ``@ai-sdk/react``'s ``useChat`` (``client/page.jsx``, built with
esbuild) in headless Chromium against a live server: the reply streams in with its
tool call and output, Stop ends it with a valid stored history, a reload mid-reply
resumes to the stored text exactly, and another user gets nothing of the chat."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync

from django_agent_sessions import DjangoSession
from tests.browser import save_screenshot
from tests.conversations import run_statuses
from tests.daphne_workers import Worker
from tests.protocols.ai_sdk.agent import LONG
from tests.protocols.ai_sdk.live import CSRF, esbuild, in_a_thread, signed_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.once,
    pytest.mark.browser,
    pytest.mark.long(25),
]

PAGE = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>useChat</title></head>
<body><div id="root"></div><script type="module" src="page.js"></script></body></html>"""
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True}
REPLY = "The forecast says sunny in Paris."


@pytest.fixture(scope="module", autouse=True)
def _orm_beside_playwright(django_db_setup: Any) -> Iterator[None]:
    """Playwright's sync API leaves an event loop set on this thread, which makes Django
    refuse the ORM here, the test database's flush after each test included. Nothing of
    the test's runs in that loop (as ``tests/admin/test_browser.py``); this module only."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="module")
def page_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    script = esbuild("page.jsx", tmp_path_factory.mktemp("ai-sdk-page"), platform="browser")
    return {"index.html": PAGE, "page.js": script.read_bytes()}


@pytest.fixture
def open_chat(browser: Any, chat_server: Worker, page_files: dict[str, bytes]) -> Iterator[Any]:
    """``open_chat(session, chat_id, **options)``: the page, signed in with the session
    cookie ``session``, served from the live server's origin (the test answers its two
    files)."""
    contexts: list[Any] = []
    errors: list[Any] = []

    def serve(route: Any) -> None:
        name = route.request.url.split("?")[0].rsplit("/", 1)[-1]
        kind = "text/html" if name.endswith(".html") else "text/javascript"
        route.fulfill(status=200, body=page_files[name], content_type=kind)

    def open_(session: str, chat_id: str, **options: Any) -> Any:
        context = browser.new_context(**(options or DESKTOP))
        context.set_default_timeout(15_000)
        cookies = [("sessionid", session), ("csrftoken", CSRF)]
        context.add_cookies([{"name": n, "value": v, "url": chat_server.url} for n, v in cookies])
        context.route(f"{chat_server.url}/ai-sdk-test/*", serve)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(error))
        page.goto(f"{chat_server.url}/ai-sdk-test/index.html?chat={chat_id}")
        page.wait_for_selector("[data-status=ready]")
        return page

    yield open_
    for context in contexts:
        context.close()
    assert errors == []


def send(page: Any, text: str) -> None:
    page.get_by_label("Message").fill(text)
    page.get_by_role("button", name="Send").click()


def reply_text(page: Any) -> str:
    return str(page.locator("li[data-role=assistant] [data-part=text]").last.text_content())


def wait_mid_reply(page: Any) -> str:
    """Wait until part of the reply shows while it is still streaming; that part."""
    page.wait_for_function(
        """() => document.querySelector("[data-status=streaming]") &&
                 document.querySelector("li[data-role=assistant] [data-part=text]")?.textContent"""
    )
    return reply_text(page)


def stored(session_id: str) -> list[Any]:
    return list(in_a_thread(async_to_sync(DjangoSession(session_id).get_items)))


def statuses_become(session_id: str, wanted: list[str]) -> list[str]:
    async def poll() -> list[str]:
        for _attempt in range(1000):
            if (found := await run_statuses(session_id)) == wanted:
                break
            await asyncio.sleep(0.01)
        return found

    return in_a_thread(async_to_sync(poll))


def test_a_reply_streams_in_with_its_tool_call_and_opens_again_as_shown(
    open_chat: Any, make_user: Any, session_id: str
) -> None:
    ann = signed_in(make_user, "ann")
    page = open_chat(ann, session_id)
    send(page, "weather?")
    page.wait_for_selector("[data-part=tool][data-state=output-available]")
    page.wait_for_selector("[data-status=ready]")
    tool = page.locator("[data-part=tool]").inner_text()
    assert tool == 'get_weather({"city":"Paris"}): sunny in Paris'
    assert reply_text(page) == REPLY
    shown = page.get_by_role("log").inner_text()
    save_screenshot(page, "ai-sdk-use-chat")
    phone = open_chat(ann, session_id, **PHONE)  # the stored history, as useChat showed it
    assert phone.get_by_role("log").inner_text() == shown
    save_screenshot(phone, "ai-sdk-use-chat-phone")


def test_stop_ends_the_reply_and_the_stored_history_is_valid(
    open_chat: Any, make_user: Any, session_id: str
) -> None:
    page = open_chat(signed_in(make_user, "ann"), session_id)
    send(page, "long")
    partial = wait_mid_reply(page)  # incremental: a part of the reply, mid-stream
    assert LONG.startswith(partial)
    page.get_by_role("button", name="Stop").click()
    page.wait_for_selector("[data-status=ready]")
    assert statuses_become(session_id, ["cancelled"]) == ["cancelled"]
    items = stored(session_id)
    assert items[0] == {"content": "long", "role": "user"}
    assert LONG.startswith(reply_text(page))
    assert len(reply_text(page)) < len(LONG)


def test_a_reload_mid_reply_resumes_to_the_stored_text(
    open_chat: Any, make_user: Any, session_id: str
) -> None:
    page = open_chat(signed_in(make_user, "ann"), session_id)
    send(page, "long")
    wait_mid_reply(page)
    page.reload()  # resume: true rejoins the run (it goes on after the disconnect)
    page.wait_for_function(
        "text => document.querySelector('li[data-role=assistant] [data-part=text]')"
        "?.textContent === text",
        arg=LONG,
    )
    assert statuses_become(session_id, ["completed"]) == ["completed"]
    assert stored(session_id)[-1]["content"][0]["text"] == reply_text(page) == LONG


def test_approvals_are_decided_on_the_page_and_the_run_goes_on(
    open_chat: Any, make_user: Any, session_id: str
) -> None:
    page = open_chat(signed_in(make_user, "ann"), session_id)
    send(page, "pay")
    approve = page.get_by_role("button", name="Approve")
    approve.nth(1).wait_for()  # the page was "ready" before the send too: wait for the parts
    page.wait_for_selector("[data-status=ready]")
    assert approve.count() == 2
    assert statuses_become(session_id, ["waiting"]) == ["waiting"]
    save_screenshot(page, "ai-sdk-use-chat-approvals")
    page.get_by_role("button", name="Approve").first.click()
    page.get_by_role("button", name="Reject").last.click()  # (Bob's: Ann's was decided)
    page.wait_for_function(
        "() => document.querySelectorAll('[data-part=tool][data-state=output-available]')"
        ".length === 2 && document.querySelector('[data-status=ready]')"
    )
    assert statuses_become(session_id, ["completed"]) == ["completed"]
    outputs = {i["call_id"]: i["output"] for i in stored(session_id) if "output" in i}
    assert outputs["call-ann"] == "sent 5 to ann"
    assert outputs["call-bob"] != "sent 7 to bob"  # rejected: the tool never ran
    assert reply_text(page).startswith("Done: sent 5 to ann; ")


def test_another_user_gets_nothing_of_the_chat(
    open_chat: Any, make_user: Any, session_id: str, chat_server: Worker
) -> None:
    page = open_chat(signed_in(make_user, "ann"), session_id)
    send(page, "hello")
    page.wait_for_selector("li[data-role=assistant]")
    page.wait_for_selector("[data-status=ready]")
    other = open_chat(signed_in(make_user, "bob"), "bobs-own-chat")
    api = f"{chat_server.url}/ai-sdk/chat"
    assert other.request.get(f"{api}/{session_id}/messages").status == 403
    assert other.request.get(f"{api}/{session_id}/stream").status == 403
    asked = {"id": "x", "role": "user", "parts": [{"type": "text", "text": "mine?"}]}
    body = {"id": session_id, "messages": [asked]}
    sent = other.request.post(api, data=body, headers={"X-CSRFToken": CSRF})
    assert sent.status == 403
    assert sent.json() == {"error": "This conversation is not yours."}
