"""A message sent during a reply in headless Chromium, with ``WHILE_RUNNING = "steer"``:
sent while the demo's research tool works, it joins the reply. The model's next call
gets it (the demo echoes it), the page shows it where it entered (after the tool's
output, before the reply), and a reload shows it there, as stored; desktop and phone,
axe-clean, on both transports."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from example_project.tests.conftest import log_in
from example_project.tests.servers import (
    DaphneServer,
    ServerDatabase,
    create_user,
    server_environment,
)
from example_project.tests.sizes import each_transport_and_size
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    docs_screenshot,
    new_page,
)
from example_project.tests.test_e2e_browser import ASSISTANT, send, wait_idle
from example_project.tests.transport_servers import started_for
from tests.browser import axe_violations

pytestmark = pytest.mark.browser
ENTRIES = ".message-user .text, .tool-call, .tool-output, .message-assistant .text"
ADDED = "Also mention puffins"
REPLY = f"You added: \u201c{ADDED}\u201d."


@pytest.fixture(scope="module", params=["websocket", "sse"])
def steering_server(
    request: Any, server_database: ServerDatabase, log_dir: Path
) -> Iterator[DaphneServer]:
    """The example project where a message joins a running reply, for each transport."""
    env = server_environment(server_database.url, WHILE_RUNNING="steer", RATE_LIMIT="120/m")
    server = started_for(request.param, "steering", log_dir, env)
    yield server
    server.close()


def entries(page: Any) -> list[str]:
    """The conversation's messages and tool entries, in the page's order."""
    shown = []
    for entry in page.locator(ENTRIES).all():
        classes = str(entry.get_attribute("class"))
        if "tool-call" in classes or "tool-output" in classes:
            shown.append(classes.split()[-1])
        else:
            shown.append(" ".join(str(entry.text_content()).split()))
    return shown


def branchable(page: Any) -> list[bool]:
    """Whether each of the person's messages offers "Branch from here" (stored ones do)."""
    users = page.locator(".message-user").all()
    return [user.get_by_role("button", name="Branch from here").is_visible() for user in users]


@each_transport_and_size("steering_server", "chat-steer")
def test_a_message_during_a_tool_call_joins_the_reply(
    steering_server,
    new_page,  # noqa: F811
    name,
    options,
):
    page = new_page(**options)
    log_in(page, steering_server.url, create_user(steering_server.env))
    send(page, "Research penguins")
    page.locator(".tool-call").wait_for()  # the research takes seconds: the reply goes on
    assert page.get_by_role("button", name="Send", exact=True).is_enabled()
    send(page, ADDED)  # returns once it entered the run (confirmed by its item.completed)
    page.locator(ASSISTANT, has_text=REPLY).wait_for()
    wait_idle(page)
    expected = [
        "Research penguins",
        "tool-call",
        "tool-output",
        ADDED,
        f"My research says: penguins are well documented (demo notes). {REPLY}",
    ]
    assert entries(page) == expected
    assert branchable(page) == [True, False]  # the answered message, stored: not the steered
    assert page.locator("#error-banner").is_hidden()  # no "busy"
    assert axe_violations(page) == []
    docs_screenshot(page, name)
    page.reload()  # as stored: the message between the tool's output and the reply
    page.locator(ASSISTANT, has_text=REPLY).wait_for()
    assert entries(page) == expected
    assert branchable(page) == [True, True]
