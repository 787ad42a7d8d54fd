"""AG-UI's own client in Chromium: a small chat page on ``@ag-ui/client``
(``client/page.js``, bundled by esbuild from the client's npm packages), served beside
the test project on a live server (``live.py``).

A streamed reply appears in pieces; a tool call and its output show; Stop ends the reply
and the stored history stays valid; another user's page gets nothing of the thread.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from django_agent_sessions.models import AgentRun, SessionItem
from tests.browser import browser  # noqa: F401
from tests.daphne_workers import Worker
from tests.protocols.ag_ui import live

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.once]
WAIT_MS = 20_000


@pytest.fixture(scope="module", autouse=True)
def _orm_beside_playwright(django_db_setup: Any) -> Iterator[None]:
    """Playwright's sync API leaves an event loop set on this thread, which makes Django
    refuse ORM calls here; the test's own never run inside that loop (as in
    ``tests/admin/test_browser.py``). Limited to this module."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture
def closing_requests() -> None:
    """The package's async fixture, replaced: these tests drive a browser (Playwright's
    own loop) and open no request of ``requests.py``."""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: Any) -> Path:
    """The page and its bundle, built from the installed packages (esbuild finds them
    through NODE_PATH: they live in the cache, not beside the page)."""
    out = tmp_path_factory.mktemp("ag-ui-page")
    esbuild = live.MODULES / "node_modules" / ".bin" / "esbuild"
    command = [str(esbuild), str(live.CLIENT_DIR / "page.js"), "--bundle", "--format=esm"]
    env = {**os.environ, "NODE_PATH": str(live.MODULES / "node_modules")}
    built = subprocess.run(
        [*command, f"--outfile={out / 'page.bundle.js'}", "--log-level=warning"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert built.returncode == 0, built.stderr
    shutil.copy(live.CLIENT_DIR / "page.html", out)
    return out


@pytest.fixture
def open_page(browser, server: Worker, bundle: Path) -> Iterator[Any]:  # noqa: F811
    """``open_page(session_cookie, thread)``: the page on the thread, signed in, served
    from the server's origin (its requests to /ag-ui/ are the server's)."""
    contexts = []

    def opened(session_cookie: bytes, thread: str) -> Any:
        context = browser.new_context()
        contexts.append(context)
        name, _, value = session_cookie.decode().partition("=")
        context.add_cookies(
            [
                {"name": "csrftoken", "value": live.CSRF, "url": server.url},
                {"name": name, "value": value, "url": server.url},
            ]
        )
        page = context.new_page()
        page.route(
            f"{server.url}/page/*",
            lambda route: route.fulfill(path=bundle / route.request.url.rsplit("/", 1)[-1]),
        )
        page.goto(f"{server.url}/page/page.html#{thread}")
        page.wait_for_load_state("networkidle")
        return page

    yield opened
    for context in contexts:
        context.close()


def _send(page: Any, text: str) -> None:
    page.fill("input[name=text]", text)
    page.click("button[type=submit]")


def _status_of_the_run(session_id: str, *ended: str) -> str:
    """The run's status once it is one of ``ended`` (the server ends it when it sees the
    client leave: waited for, within a bound)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        statuses = list(
            AgentRun.objects.filter(session__session_id=session_id).values_list("status", flat=True)
        )
        if statuses and statuses[-1] in ended:
            return statuses[-1]
        time.sleep(0.05)
    raise AssertionError(f"the run did not end: {statuses}")


def test_a_reply_streams_in_and_a_tool_call_shows(open_page, alice_cookie, session_id):
    page = open_page(alice_cookie, session_id)
    # Every length the reply's text had on screen, as it changed.
    page.evaluate(
        """() => { window.lengths = [];
          new MutationObserver(() => {
            const reply = document.querySelector('[data-role=assistant]');
            if (reply) window.lengths.push(reply.textContent.length);
          }).observe(document.querySelector('[role=log]'),
                     {childList: true, subtree: true, characterData: true}); }"""
    )
    _send(page, "weather?")
    page.wait_for_selector("[role=log][data-status=success]", timeout=WAIT_MS)
    assert page.inner_text("[data-kind=tool_call]") == "get_weather"
    assert page.inner_text("[data-kind=tool_output]") == "sunny in Paris"
    reply = "The forecast says sunny in Paris."
    assert page.inner_text("[data-role=assistant]") == reply
    lengths = sorted(set(page.evaluate("window.lengths")) - {0})
    assert len(lengths) >= 3, lengths  # in pieces, not at once
    assert lengths[-1] == len(reply)


def test_stop_ends_the_reply_and_the_history_stays_valid(open_page, alice_cookie, session_id):
    page = open_page(alice_cookie, session_id)
    _send(page, "long")
    page.wait_for_function(
        "() => document.querySelector('[data-role=assistant]')?.textContent.length > 0",
        timeout=WAIT_MS,
    )
    page.click("#stop")
    page.wait_for_selector("[role=log][data-status=stopped]", timeout=WAIT_MS)
    shown = page.inner_text("[data-role=assistant]")
    assert 0 < len(shown) < len("and so the story goes on " * 60)
    assert _status_of_the_run(session_id, "cancelled", "completed") == "cancelled"
    stored = SessionItem.objects.filter(session__session_id=session_id).order_by("id")
    # The person's message, and no half-written reply (or call without an output).
    assert list(stored.values_list("item_type", "role")) == [("message", "user")]


def test_another_users_page_gets_nothing(open_page, alice_cookie, bob_cookie, session_id):
    alices = open_page(alice_cookie, session_id)
    _send(alices, "weather?")
    alices.wait_for_selector("[role=log][data-status=success]", timeout=WAIT_MS)
    bobs = open_page(bob_cookie, session_id)
    _send(bobs, "hello?")
    bobs.wait_for_selector("[role=log][data-status=failed]", timeout=WAIT_MS)
    assert bobs.get_attribute("[data-kind=error]", "data-status") == "403"
    assert "sunny" not in bobs.inner_text("body")
    runs = AgentRun.objects.filter(session__session_id=session_id)
    assert list(runs.values_list("status", flat=True)) == ["completed"]
