"""Keeping conversations in headless Chromium: a model title appears after the first
exchange (the demo's, offline), and pin, archive ("Show archived") and the agent filter
change the sidebar's list and what the search finds; desktop and phone, axe-clean, on
both transports."""

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
    manage,
    server_environment,
)
from example_project.tests.sizes import each_transport_and_size
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    docs_screenshot,
    new_page,
)
from example_project.tests.transport_servers import started_for
from tests.browser import axe_violations, save_screenshot

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", params=["websocket", "sse"])
def titles_server(
    request: Any, server_database: ServerDatabase, log_dir: Path
) -> Iterator[DaphneServer]:
    """The example project with its offline titles on (the other servers switch them off),
    for each transport."""
    env = server_environment(server_database.url, DEMO_TITLES="1", RATE_LIMIT="120/m")
    server = started_for(request.param, "titles", log_dir, env)
    yield server
    server.close()


def two_more(env: dict[str, str], owner: str) -> None:
    """Two conversations about zeppelins; an agent named "Archivist" ran in the first."""
    manage(
        env,
        "shell",
        "-c",
        "from asgiref.sync import async_to_sync\n"
        "from django.contrib.auth import get_user_model\n"
        "from django_agent_sessions import DjangoSession\n"
        "from django_agent_sessions.models import AgentRun, AgentSession\n"
        f"owner = get_user_model().objects.get(username={owner!r})\n"
        "for name in ('Zeppelin notes', 'Zeppelin plans'):\n"
        "    session = DjangoSession(owner.username + name.lower(), owner=owner)\n"
        "    async_to_sync(session.add_items)([{'role': 'user', 'content': name}])\n"
        "notes = AgentSession.objects.get(session_id=owner.username + 'zeppelin notes')\n"
        "AgentRun.objects.create(session=notes, agent_name='Archivist', status='completed')\n",
    )


def listed(page: Any) -> list[str]:
    return page.locator("#conversation-list li > a").all_text_contents()


def until_listed(page: Any, titles: list[str]) -> None:
    page.wait_for_function(
        "titles => JSON.stringify([...document.querySelectorAll('#conversation-list li > a')]"
        ".map(a => a.textContent)) === JSON.stringify(titles)",
        arg=titles,
    )


def until_found(page: Any, query: str, titles: list[str]) -> None:
    """Search for ``query`` and wait until the results are the conversations ``titles``
    (sorted), each listed once: a conversation whose title and message both match is
    one result, with the message's snippet."""
    box = page.get_by_role("searchbox", name="Search conversations")
    box.fill(query)
    box.press("Enter")
    page.wait_for_function(
        "titles => JSON.stringify([...document.querySelectorAll("
        "'#search-results .search-title')].map(t => t.textContent).sort())"
        " === JSON.stringify(titles)",
        arg=titles,
    )
    snippets = page.locator("#search-results .search-snippet").all_text_contents()
    assert sorted(snippets) == titles  # each conversation's first message is its title


@each_transport_and_size("titles_server", "chat-keeping")
def test_titles_pins_archives_and_the_agent_filter(
    titles_server,
    new_page,  # noqa: F811
    name,
    options,
):
    user = create_user(titles_server.env)
    page = new_page(**options)
    log_in(page, titles_server.url, user)
    page.locator("#message").fill("what's the weather in Lisbon?")
    page.locator("#message").press("Enter")
    # The demo's title, after the reply: in the heading and the sidebar.
    page.locator("#conversation-title", has_text="Weather Lisbon").wait_for()
    until_listed(page, ["Weather Lisbon"])

    two_more(titles_server.env, user[0])
    page.reload()
    toggle = page.locator("#sidebar-toggle")
    if toggle.is_visible():
        toggle.click()
    assert listed(page) == ["Zeppelin plans", "Zeppelin notes", "Weather Lisbon"]
    rows = page.locator("#conversation-list li")

    # Pinned first.
    rows.filter(has_text="Weather Lisbon").get_by_role("button", name="Pin").click()
    until_listed(page, ["Weather Lisbon", "Zeppelin plans", "Zeppelin notes"])
    pin = rows.filter(has_text="Weather Lisbon").get_by_role("button", name="Pin")
    assert pin.get_attribute("aria-pressed") == "true"
    # Each row's buttons are named with its title: a list of buttons read out of
    # context says whose each is (they were all "Pin" and "Archive").
    names = rows.get_by_role("button").evaluate_all("all => all.map(b => b.ariaLabel)")
    assert sorted(names) == sorted(
        f"{action} {title}"
        for action in ("Pin", "Archive")
        for title in ("Weather Lisbon", "Zeppelin plans", "Zeppelin notes")
    )

    # Archived: out of the list and the search until shown.
    rows.filter(has_text="Zeppelin notes").get_by_role("button", name="Archive").click()
    until_listed(page, ["Weather Lisbon", "Zeppelin plans"])
    until_found(page, "zeppelin", ["Zeppelin plans"])
    page.get_by_label("Show archived").check()
    until_listed(page, ["Weather Lisbon", "Zeppelin plans", "Zeppelin notes"])
    until_found(page, "zeppelin", ["Zeppelin notes", "Zeppelin plans"])
    archived = rows.filter(has_text="Zeppelin notes").get_by_role("button", name="Archive")
    assert archived.get_attribute("aria-pressed") == "true"
    # Shown, an archived conversation's title is set apart (muted italics).
    title = rows.filter(has_text="Zeppelin notes").locator("a")
    assert title.evaluate("a => getComputedStyle(a).fontStyle") == "italic"

    # One agent's conversations only.
    page.get_by_label("Agent").select_option("Archivist")
    until_listed(page, ["Zeppelin notes"])
    assert axe_violations(page) == []
    docs_screenshot(page, name)
    page.get_by_label("Agent").select_option("")
    until_listed(page, ["Weather Lisbon", "Zeppelin plans", "Zeppelin notes"])

    # Where a pointer can hover, Pin and Archive show over the title's end while the row
    # is pointed at: a title keeps the row's width (they squeezed it to a few letters).
    row = rows.filter(has_text="Zeppelin plans")
    if not page.evaluate("matchMedia('(hover: none)').matches"):
        assert row.locator("a").bounding_box()["width"] > 0.9 * row.bounding_box()["width"]
    row.hover()
    save_screenshot(page, f"{name}-pointed")
