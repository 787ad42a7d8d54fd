"""The transcript page in a real browser: log in, open a conversation, read it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.browser import browser, save_screenshot  # noqa: F401  (the fixture)
from tests.conversations import XSS_IMG, XSS_SCRIPT, make_conversation, transcript_items, xss_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.once]


@pytest.fixture(scope="module", autouse=True)
def _orm_beside_playwright(django_db_setup):
    """Playwright's sync API leaves an event loop set on this thread, which makes Django
    refuse ORM calls here. The test's own ORM calls never run inside that loop, so they
    are safe; the live server's thread is unaffected. Limited to this module."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


def log_in(page, live_server) -> None:
    page.goto(live_server.url + reverse("admin:login"))
    page.fill("#id_username", "staff")
    page.fill("#id_password", "pw-staff")
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")


def test_staff_reads_a_conversation_in_the_browser(browser, live_server):  # noqa: F811
    User.objects.create_superuser("staff", "staff@example.com", "pw-staff")
    alice = User.objects.create_user("alice", "alice@example.com")
    make_conversation("support-42", transcript_items(), owner=alice, title="Weather in Paris")
    hostile = make_conversation("c-hostile", xss_items(), title=XSS_SCRIPT)
    dialogs: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})

    def record(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", record)

    log_in(page, live_server)
    page.goto(live_server.url + reverse("admin:django_agent_sessions_agentsession_changelist"))
    assert "Weather in Paris" in page.inner_text("#result_list")
    save_screenshot(page, "admin-changelist")
    page.get_by_role("link", name="support-42").click()
    page.wait_for_selector(".agent-transcript")
    text = page.inner_text("#content")
    for visible in (
        "What's the weather in Paris?",
        "Tool call: get_weather",
        "Output of get_weather",
        "Sunny, 21 C",
        "Handoff: transfer_to_billing_agent",
        "Reasoning summary",
        "It is sunny in Paris.",
        "Page 1 of 1 (7 items)",
    ):
        assert visible in text
    # Reasoning and raw JSON stay folded until asked for.
    summary = page.get_by_text("Need the weather tool.", exact=True)
    assert not summary.is_visible()
    page.get_by_text("Reasoning summary").click()
    assert summary.is_visible()
    page.locator("#content .agent-entry-raw summary").first.click()
    assert '"content": "What\'s the weather in Paris?"' in page.inner_text(".agent-entry-raw")
    save_screenshot(page, "admin-transcript")

    change = reverse("admin:django_agent_sessions_agentsession_change", args=[hostile.pk])
    page.goto(live_server.url + change)
    for details in page.locator("details").all():
        details.evaluate("element => element.open = true")
    hostile_text = page.inner_text("#content")
    assert XSS_SCRIPT in hostile_text
    assert XSS_IMG in hostile_text
    assert page.locator("#content img").count() == 0
    scripts = page.locator("script").evaluate_all("nodes => nodes.map(n => n.textContent)")
    assert not [script for script in scripts if "alert" in script]
    page.wait_for_timeout(200)
    assert dialogs == []
    page.close()


def test_transcript_follows_the_admin_dark_theme(browser, live_server):  # noqa: F811
    User.objects.create_superuser("staff", "staff@example.com", "pw-staff")
    conversation = make_conversation("support-42", transcript_items())
    page = browser.new_page(color_scheme="dark")
    log_in(page, live_server)
    page.goto(
        live_server.url
        + reverse("admin:django_agent_sessions_agentsession_change", args=[conversation.pk])
    )
    colour = page.locator(".agent-entry").first.evaluate("e => getComputedStyle(e).color")
    red, green, blue = (int(c) for c in colour[colour.index("(") + 1 : -1].split(",")[:3])
    assert min(red, green, blue) > 150, colour  # light text on the dark theme
    page.close()
