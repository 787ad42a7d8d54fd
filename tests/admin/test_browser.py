"""The transcript page in a real browser: log in, open a conversation, read it."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.urls import reverse

from django_agent_sessions.models import SessionItem
from tests.browser import browser, save_screenshot  # noqa: F401  (the fixture)
from tests.conversations import XSS_IMG, XSS_SCRIPT, make_conversation, transcript_items, xss_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.once]

CHANGE = "admin:django_agent_sessions_agentsession_change"


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


def test_staff_find_words_in_a_transcript_and_land_on_the_item(browser, live_server):  # noqa: F811
    User.objects.create_superuser("staff", "staff@example.com", "pw-staff")
    support = make_conversation(
        "support-77",
        [
            {"role": "user", "content": "My order #1042 arrived broken. Can I get a refund?"},
            {
                "role": "assistant",
                "content": "I'm sorry! A refund or a replacement: which do you prefer?",
            },
            {"role": "user", "content": "A replacement, please, and quickly."},
            {
                "role": "assistant",
                "content": "Done: a replacement ships tomorrow. No refund is needed.",
            },
            {"role": "user", "content": "Thanks!"},
        ],
        title="Broken order",
    )
    texts = [f"Question {n} about the order" for n in range(130)]
    texts[117] = "Where is the <b>tracking number</b> for parcel 7?"
    long = make_conversation(
        "support-long",
        [{"role": ("user", "assistant")[n % 2], "content": text} for n, text in enumerate(texts)],
    )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log_in(page, live_server)

    page.goto(live_server.url + reverse(CHANGE, args=[support.pk]))
    page.get_by_role("searchbox", name="Find in this conversation").fill("refund")
    page.keyboard.press("Enter")
    page.wait_for_selector(".agent-find-results")
    assert "3 items match “refund”." in page.inner_text(".agent-transcript-find")
    marks = page.locator(".agent-find-results mark").all_inner_texts()
    assert [mark.lower() for mark in marks] == ["refund", "refund", "refund"]
    save_screenshot(page, "admin-transcript-find")

    page.goto(live_server.url + reverse(CHANGE, args=[long.pk]))
    page.get_by_role("searchbox", name="Find in this conversation").fill("tracking num")
    page.keyboard.press("Enter")
    page.wait_for_selector(".agent-find-results")
    result = page.locator(".agent-find-results li")
    assert result.count() == 1
    assert "<b>tracking number</b>" in result.inner_text()  # the message's HTML as text
    result.get_by_role("link").click()
    page.wait_for_url("**page=2**")
    target = page.locator(":target")
    target.wait_for()
    item = SessionItem.objects.filter(session=long).order_by("id").values_list("id", flat=True)[117]
    assert target.get_attribute("id") == f"item-{item}"
    assert "Where is the <b>tracking number</b> for parcel 7?" in target.inner_text()
    assert "Page 2 of 2 (130 items)" in page.inner_text(".agent-transcript-pages")
    box = target.bounding_box()
    assert box is not None
    assert 0 <= box["y"] < 900  # scrolled to it
    outline = target.evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline == "solid"  # and highlighted
    path = Path(settings.ARTIFACTS_DIR) / "screenshots" / "admin-transcript-find-landed.png"
    page.screenshot(path=str(path))  # the window the link lands on, not the whole page
    page.close()
