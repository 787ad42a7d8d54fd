"""A real browser talks to a real daphne server: the protocol as a front end sees it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from tests.browser import launched_chromium, save_screenshot
from tests.processes import REPO_ROOT, worker_env
from tests.services import free_port
from tests.websockets import login_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.once]

# A small client, as a chat page would have it: it records every frame and close code.
CLIENT_JS = """
window.openChat = (name, sessionId) => new Promise((resolve) => {
  const chat = {frames: [], closeCode: null};
  chat.socket = new WebSocket(`ws://${location.host}/ws/agent-sessions/${sessionId}/`);
  chat.socket.onmessage = (event) => chat.frames.push(JSON.parse(event.data));
  chat.socket.onclose = (event) => { chat.closeCode = event.code; resolve(chat); };
  chat.socket.onopen = () => resolve(chat);
  window[name] = chat;
});
window.framesOf = (name, type) => window[name].frames.filter((f) => f.type === type);
"""
# How a browser reports a close whose handshake did not finish (see the anonymous test).
ABNORMAL_CLOSURE = 1006
REFUSAL_ATTEMPTS = 3


@pytest.fixture
def server():
    port = free_port()
    env = worker_env(AGENT_SESSIONS_TEST_AGENT="tests.chat_agent.make_demo_agent")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "tests.asgi:application",
        ],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120  # a hang guard: a busy machine starts slowly
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError("daphne did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def alice_cookie(make_user):
    return login_cookie(make_user("alice")).decode().split("=", 1)[1]


@pytest.fixture
def browser(server, alice_cookie):
    """A browser started after the database work of the test's setup, and stopped before
    its teardown: Playwright's event loop makes Django refuse sync queries meanwhile."""
    with launched_chromium() as instance:
        yield instance


def open_page(context, base):
    page = context.new_page()
    page.goto(base + "/admin/login/")
    page.add_script_tag(content=CLIENT_JS)
    return page


def wait_for(page, name, type_, count=1):
    page.wait_for_function(f"framesOf('{name}', '{type_}').length >= {count}", timeout=10_000)


def test_a_browser_chats_cancels_reconnects_and_shares_a_conversation(
    browser, server, alice_cookie, session_id
):
    context = browser.new_context()
    context.add_cookies([{"name": "sessionid", "value": alice_cookie, "url": server}])
    tab = open_page(context, server)
    other_tab = open_page(context, server)
    tab.evaluate(f"openChat('chat', '{session_id}')")
    other_tab.evaluate(f"openChat('chat', '{session_id}')")
    # Both tabs must be connected before the run starts, or the later one only catches up.
    wait_for(tab, "chat", "history")
    wait_for(other_tab, "chat", "history")

    # A conversation with a tool, seen by both tabs.
    tab.evaluate("chat.socket.send(JSON.stringify({type: 'user_message', text: 'weather?'}))")
    wait_for(tab, "chat", "run.completed")
    wait_for(other_tab, "chat", "run.completed")
    kinds = tab.evaluate("framesOf('chat', 'item.completed').map((f) => f.item.kind)")
    assert kinds == ["message", "tool_call", "tool_output", "message"]
    text = tab.evaluate("framesOf('chat', 'text.delta').map((f) => f.delta).join('')")
    assert text == "The forecast says sunny in Paris."
    # The other tab sees the same run end with the same reply. (It had connected to an id
    # with no conversation yet: the first message created it, and that tab joined with a
    # history frame holding the run so far, so it has fewer of the run's first frames.)
    ending = "framesOf('chat', 'run.completed').map((f) => f.run_id)"
    assert other_tab.evaluate(ending) == tab.evaluate(ending)
    reply = "framesOf('chat', 'item.completed').map((f) => f.item.text).pop()"
    assert other_tab.evaluate(reply) == tab.evaluate(reply) == "The forecast says sunny in Paris."

    # Stop a long reply from the other tab.
    seen = tab.evaluate("framesOf('chat', 'text.delta').length")
    tab.evaluate("chat.socket.send(JSON.stringify({type: 'user_message', text: 'a long story'}))")
    wait_for(tab, "chat", "text.delta", count=seen + 3)
    other_tab.evaluate("chat.socket.send(JSON.stringify({type: 'cancel'}))")
    wait_for(tab, "chat", "run.cancelled")
    save_screenshot(tab, "websocket-client")

    # A reload sees the conversation; the half-written reply is a run note, not an item.
    tab.reload()
    tab.add_script_tag(content=CLIENT_JS)
    tab.evaluate(f"openChat('again', '{session_id}')")
    wait_for(tab, "again", "history")
    history = tab.evaluate("framesOf('again', 'history')[0]")
    assert [item["kind"] for item in history["items"]] == [  # noqa: RUF100
        "message",
        "tool_call",
        "tool_output",
        "message",
        "message",
        "message",
    ]
    user, note = history["items"][-2:]
    assert (user["role"], user["text"], user["id"]) == ("user", "a long story", user["id"])
    assert (note["role"], note["status"], note["id"]) == ("assistant", "cancelled", None)
    assert note["run_id"] == user["run_id"]
    assert history["active_run"] is None
    context.close()


def close_code(page, name: str, session_id: str) -> int:
    chat = page.evaluate(f"openChat('{name}', '{session_id}').then(() => null)")
    assert chat is None
    page.wait_for_function(f"{name}.closeCode !== null", timeout=10_000)
    return int(page.evaluate(f"{name}.closeCode"))


def test_the_browser_sees_the_close_code_for_anonymous_sockets(browser, server, session_id):
    context = browser.new_context()
    page = open_page(context, server)
    # daphne (autobahn) waits 1 s for the browser's reply to its close frame, then resets
    # the connection, and Chromium reports a close it had not finished as 1006. A loaded
    # machine can stall either side that long: only such an abnormal close is tried again.
    codes = [close_code(page, "chat", session_id)]
    while codes[-1] == ABNORMAL_CLOSURE and len(codes) < REFUSAL_ATTEMPTS:
        codes.append(close_code(page, f"chat{len(codes)}", session_id))
    assert codes[-1] == 4401, codes
    context.close()
