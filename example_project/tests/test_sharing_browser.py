"""Share links in headless Chromium: the owner shares a conversation from the chat, a
signed-in viewer opens the link (tools hidden), continues it as a copy of their own, and
the owner revokes it from the list of their links; desktop and phone, axe-clean."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from example_project.tests.conftest import log_in, wait_history
from example_project.tests.servers import (
    DaphneServer,
    ServerDatabase,
    create_user,
    server_environment,
)
from example_project.tests.sizes import desktop_and_phone
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    REPLY,
    docs_screenshot,
    new_page,
)
from example_project.tests.test_e2e_browser import send, wait_idle
from example_project.tests.transport_servers import started_for
from tests.browser import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.long(60)]

CALCULATION = "Please calculate (12 + 30) * 2"  # the demo model answers with a tool


@pytest.fixture(scope="module")
def sharing_server(server_database: ServerDatabase, log_dir: Path) -> Iterator[DaphneServer]:
    env = server_environment(server_database.url, SHARE_LINKS="login", RATE_LIMIT="120/m")
    server = started_for("websocket", "sharing", log_dir, env)
    yield server
    server.close()


@desktop_and_phone("chat-share")
def test_share_open_without_tools_continue_as_a_copy_and_revoke(
    sharing_server,
    new_page,  # noqa: F811
    name,
    options,
):
    server = sharing_server
    owner = new_page(**options)
    log_in(owner, server.url, create_user(server.env))
    send(owner, CALCULATION)
    wait_idle(owner)
    owner.locator('[data-kind="tool_call"]').first.wait_for()  # the owner sees the tool
    reply = str(owner.locator(f"{REPLY} .text").last.text_content()).strip()

    owner.get_by_role("button", name="Share").click()
    owner.get_by_role("button", name="Create link").click()
    link = owner.locator("#share-url")
    link.wait_for()
    url = str(link.input_value())
    assert re.search(r"/share/[\w-]{43}/$", url)
    assert axe_violations(owner) == []

    viewer = new_page(**options)
    log_in(viewer, server.url, create_user(server.env))
    viewer.goto(url)
    viewer.get_by_role("heading", level=1).wait_for()
    transcript = str(viewer.locator(".shared-transcript").text_content())
    assert CALCULATION in transcript
    assert reply in transcript
    assert viewer.locator(".shared-tool_call, .shared-tool_output").count() == 0
    robots = viewer.locator('meta[name="robots"]').get_attribute("content")
    assert robots == "noindex, nofollow"
    assert axe_violations(viewer) == []
    docs_screenshot(viewer, name)

    viewer.get_by_role("button", name="Continue as a copy").click()
    viewer.wait_for_url(re.compile(r".*/c/[0-9a-f]{32}/$"))
    wait_history(viewer)
    viewer.locator("#conversation-title", has_text="(copy)").wait_for()
    assert viewer.locator('[data-kind="tool_call"]').count() == 0  # hidden, so not copied
    assert reply in str(viewer.locator(f"{REPLY} .text").last.text_content())

    owner.goto(server.url + "/share/links/")
    owner.get_by_role("button", name="Revoke").click()
    owner.get_by_role("button", name="Revoke").wait_for(state="detached")
    assert "revoked" in str(owner.locator(".share-link-meta").text_content())
    assert axe_violations(owner) == []
    gone = viewer.goto(url)
    assert gone is not None
    assert gone.status == 404
    assert reply not in viewer.content()
