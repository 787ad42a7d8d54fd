"""A token budget in the packaged chat, in headless Chromium, on both transports: the
page shows what is left; a person over the budget sees why and when it refills, and
nothing is sent; once the budget's day is over, sending works again."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from example_project.tests.conftest import log_in
from example_project.tests.servers import (
    ServerDatabase,
    create_user,
    server_environment,
)
from example_project.tests.sizes import each_transport_and_size
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    CONFIRMED,
    USER,
    docs_screenshot,
    new_page,
)
from example_project.tests.test_e2e_browser import send, wait_idle
from example_project.tests.transport_servers import started_for
from tests.browser import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.long(40)]

# The demo model's first reply spends more than this: the second message is refused.
BUDGET = 10
# The person's runs, moved a day back: as if the budget's day were over.
A_DAY_EARLIER = {
    "postgres": "started_at - interval '1 day'",
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', started_at, '-1 day')",
}
MOVE_RUNS = (
    "UPDATE django_agent_sessions_agentrun SET started_at = {earlier}"
    " WHERE session_id IN (SELECT s.id FROM django_agent_sessions_agentsession s"
    " JOIN auth_user u ON u.id = s.owner_id WHERE u.username = %s) RETURNING id"
)


def write(env: dict[str, str], sql: str, params: tuple[Any, ...]) -> list[Any]:
    """Run ``sql`` on the servers' database and commit it; the rows it returns."""
    url = env["DATABASE_URL"]
    if url.startswith("sqlite:///"):
        earlier = A_DAY_EARLIER["sqlite"]
        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db, db:
            return db.execute(sql.format(earlier=earlier).replace("%s", "?"), params).fetchall()
    with psycopg.connect(url) as server:
        return server.execute(
            sql.format(earlier=A_DAY_EARLIER["postgres"]).encode(), params
        ).fetchall()


def not_staff(env: dict[str, str], username: str) -> None:
    """The test logins are staff, who have no budget: this one is a plain user."""
    sql = "UPDATE auth_user SET is_staff = FALSE, is_superuser = FALSE WHERE username = %s"
    assert write(env, sql + " RETURNING id", (username,))


@pytest.fixture(scope="module", params=["websocket", "sse"])
def budget_server(request: Any, server_database: ServerDatabase, log_dir: Path) -> Iterator[Any]:
    env = server_environment(server_database.url, TOKENS_PER_DAY=str(BUDGET))
    server = started_for(request.param, "budget", log_dir, env)
    yield server
    server.close()


@each_transport_and_size("budget_server", "chat-budget")
def test_a_person_over_budget_sees_when_it_refills_and_can_send_after(
    budget_server,
    new_page,  # noqa: F811
    name,
    options,
):
    user = create_user(budget_server.env)
    not_staff(budget_server.env, user[0])
    page = new_page(**options)
    log_in(page, budget_server.url, user)
    budget = page.locator("#budget")
    assert budget.text_content().startswith(f"{BUDGET} tokens left until")
    send(page, "Hello there")
    wait_idle(page)
    # The page asks for what is left once the reply has ended: its answer comes after.
    page.wait_for_function(
        "document.querySelector('#budget').textContent.startsWith('0 tokens left until')"
    )

    box = page.get_by_label("Message", exact=True)
    box.fill("One more")
    box.press("Enter")
    banner = page.locator("#error-banner")
    banner.wait_for()
    assert "You have used your token budget" in banner.text_content()
    assert "You can send messages again after" in banner.text_content()
    refused = page.locator(USER).nth(1)
    assert refused.get_attribute("data-status") == "failed"  # shown as not sent
    assert axe_violations(page) == []
    docs_screenshot(page, name)

    assert write(budget_server.env, MOVE_RUNS, (user[0],))  # the budget's day is over
    send(page, "Tomorrow, then")
    wait_idle(page)
    assert page.locator(CONFIRMED).count() == 2  # the first message and this one
