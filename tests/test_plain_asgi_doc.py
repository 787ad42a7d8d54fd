"""docs/plain-asgi.md, followed to the letter: a fresh project without Channels, served by
uvicorn, chats over Server-Sent Events in Chromium.

The blocks are the guide's own (``<!-- plain-asgi: PATH MODE -->``), applied as
``tests/test_integration_doc.py`` applies the main guide's: the install block runs in a
new virtual environment, which must not hold Channels or daphne; then ``check`` and
``migrate`` are clean, and the page chats, approves a tool call, stops a reply and picks
a reply up again after a reload.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import browser, save_screenshot  # noqa: F401
from tests.services import free_port
from tests.test_integration_doc import (
    INSTALL_TIMEOUT,
    PASSWORD,
    REPO_ROOT,
    USERNAME,
    apply_blocks,
    fresh_environment,
    guide_blocks,
    install_as_the_guide_says,
    migrate_with_a_user,
    run,
    served,
    watched_page,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.once,
    pytest.mark.full,
    pytest.mark.timeout(INSTALL_TIMEOUT + 300),
    pytest.mark.long(50),
]

GUIDE = REPO_ROOT / "docs" / "plain-asgi.md"
MARKER = "plain-asgi"
ASSISTANT = '[data-kind="message"][data-role="assistant"] .text'


def test_the_guide_covers_every_step():
    targets = {(target, mode) for target, mode, _body in guide_blocks(GUIDE, MARKER)}
    assert targets == {
        ("install", None),
        ("mysite/settings.py", "append"),
        ("mysite/asgi.py", "replace"),
        ("mysite/urls.py", "replace"),
        ("mysite/chat_agent.py", "new"),
        ("shell", None),
    }
    (shell,) = [body for target, _mode, body in guide_blocks(GUIDE, MARKER) if target == "shell"]
    assert "uvicorn mysite.asgi:application\n" in shell
    assert "(plain-asgi.md)" in (REPO_ROOT / "docs" / "integration.md").read_text()


@pytest.fixture(scope="module")
def project(
    tmp_path_factory: pytest.TempPathFactory, offline_pip: dict[str, str]
) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("plain-asgi")
    env = fresh_environment(offline_pip)
    project_dir = install_as_the_guide_says(root, env, GUIDE, MARKER)
    apply_blocks(project_dir, guide_blocks(GUIDE, MARKER))
    return project_dir, env


def test_channels_is_not_installed_and_check_is_clean(project):
    project_dir, env = project
    code = "import importlib.util as u; print(u.find_spec('channels'), u.find_spec('daphne'))"
    found = run(project_dir, env, "-c", code)
    assert found.strip() == "None None"
    out = run(project_dir, env, "manage.py", "check")
    assert "System check identified no issues (0 silenced)." in out, out


@pytest.fixture(scope="module")
def server(project) -> Iterator[str]:
    project_dir, env = project
    migrate_with_a_user(project_dir, env)
    port = free_port()
    args = ["-m", "uvicorn", "mysite.asgi:application", "--port", str(port)]
    with served(project_dir, env, args, port) as url:
        yield url


def send(page: Any, text: str) -> None:
    # The last reply's text shows before its run ends; till then the page refuses to send.
    page.wait_for_selector("#send-button:not([disabled])")
    box = page.get_by_label("Message", exact=True)
    box.fill(text)
    box.press("Enter")


def test_a_fresh_project_without_channels_chats_approves_stops_and_reloads(browser, server):  # noqa: F811
    context, page, problems = watched_page(browser)
    try:
        page.goto(server + "/chat/")
        page.get_by_label("Username").fill(USERNAME)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(re.compile(r".*/chat/c/[0-9a-f]{32}/$"))
        assert page.locator("body").get_attribute("data-transport") == "sse"
        page.wait_for_selector('#connection-status[data-state="connected"]')
        problems.clear()  # the admin's login page has no icon: its /favicon.ico is a 404

        send(page, "hello there")
        page.locator(f"{ASSISTANT} strong:text-is('hello there')").wait_for()

        send(page, "send an email to Ann")
        card = page.locator("[data-kind='approval']").last
        card.wait_for()
        assert "Send an email" in str(card.text_content())
        card.get_by_role("button", name="Approve").click()
        done = re.compile(r"^\s*Done: Sent to ann@example\.com\.\s*$")
        page.locator(ASSISTANT, has_text=done).wait_for()

        send(page, "look up owls")
        stop = page.get_by_role("button", name="Stop")
        stop.wait_for()
        page.reload()  # mid-reply: the tool takes five seconds
        page.wait_for_selector('#connection-status[data-state="connected"]')
        stop.wait_for()  # the run is still going, and the page knows it
        stop.click()
        page.locator(".note", has_text="Stopped.").last.wait_for()  # no reply text yet
        page.wait_for_selector("#send-button:not([disabled])")
        save_screenshot(page, "plain-asgi-fresh-project")

        page.reload()
        page.wait_for_selector('#connection-status[data-state="connected"]')
        texts = [t.strip() for t in page.locator(".message .text").all_text_contents()]
        assert texts[:2] == ["hello there", "You said: hello there"]
        assert "Done: Sent to ann@example.com." in texts
        assert problems == []
    finally:
        context.close()
