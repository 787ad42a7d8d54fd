"""The usage page in a real browser, light and dark: the chart's bars, the table, no serious
accessibility problem. ``SAVE_DOCS_SCREENSHOT=1`` also refreshes
``docs/images/admin-usage.png`` and ``docs/images/admin-usage-dark.png``."""

from __future__ import annotations

import os
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from tests.browser import axe_violations, browser, save_screenshot  # noqa: F401  (the fixture)
from tests.usage_helpers import PRICES, local, run, share

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.once]

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


@pytest.fixture(scope="module", autouse=True)
def _orm_beside_playwright(django_db_setup):
    """Playwright's sync API leaves an event loop set on this thread (see test_browser)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


def two_weeks_of_runs() -> int:
    """Runs of three people on three models over 14 days (one quiet day); the days with
    tokens."""
    people = [User.objects.create_user(name) for name in ("alice", "bob", "chen")]
    today = timezone.localdate()
    busy = 0
    for back in range(14):
        if back == 5:
            continue
        day = today - timedelta(days=back)
        busy += 1
        for n, person in enumerate(people):
            shares = {"gpt-a": share(2, 3000 + 700 * ((back + n) % 5), 600 + 90 * back, 800)}
            if (back + n) % 3 == 0:
                shares["gpt-b"] = share(1, 1500 + 300 * n, 400)
            if n == 2 and back % 4 == 0:
                shares["local-llm"] = share(1, 2000, 500)
            run(person, local(day, 9 + n), shares)
    return busy


def docs_screenshot(page: Any, name: str) -> None:
    path = save_screenshot(page, name)
    if os.environ.get("SAVE_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(path, DOCS_IMAGES / f"{name}.png")


@override_settings(AGENT_SESSIONS={"PRICES": PRICES})
@pytest.mark.parametrize(
    ("name", "scheme"), [("admin-usage", "light"), ("admin-usage-dark", "dark")]
)
def test_staff_read_usage_with_its_chart(browser, live_server, name, scheme):  # noqa: F811
    User.objects.create_superuser("staff", "staff@example.com", "pw-staff")
    busy = two_weeks_of_runs()
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, color_scheme=scheme, bypass_csp=True
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(live_server.url + reverse("admin:login"))
    page.fill("#id_username", "staff")
    page.fill("#id_password", "pw-staff")
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")
    page.goto(live_server.url + reverse("admin:django_agent_sessions_agentrun_changelist"))
    page.locator(".object-tools").get_by_role("link", name="Usage", exact=True).click()
    page.wait_for_selector("#usage-table")
    start = (timezone.localdate() - timedelta(days=13)).isoformat()
    page.fill("#id_start", start)
    page.click("input[type=submit][value=Show]")
    page.wait_for_selector(f"#id_start[value='{start}']")
    assert page.input_value("#id_end") == timezone.localdate().isoformat()  # the default's
    assert page.locator("g.usage-bar").count() == busy
    assert page.locator("#usage-table tbody tr").count() == busy
    assert page.get_by_role("img", name="Tokens per day").count() == 1
    legend = page.inner_text(".usage-legend")
    assert "gpt-a" in legend
    assert "local-llm" in legend
    colour = page.locator(".usage-axis").first.evaluate("e => getComputedStyle(e).fill")
    channels = [int(c) for c in colour[colour.index("(") + 1 : -1].split(",")[:3]]
    assert (min(channels) > 150) == (scheme == "dark"), colour  # the axis follows the theme
    assert axe_violations(page) == []
    docs_screenshot(page, name)
    page.select_option("#id_group", "user")
    page.click("input[type=submit][value=Show]")
    page.wait_for_selector("#usage-table tbody th >> text=alice")
    assert page.locator("#usage-table tbody tr").count() == 3
    assert errors == []
    context.close()
