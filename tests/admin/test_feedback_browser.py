"""The feedback list and a transcript with files, in a real browser at desktop size:
filters, the link from a rating to its reply, a file downloaded from the transcript.
``SAVE_DOCS_SCREENSHOT=1`` also refreshes ``docs/images/admin-feedback.png`` and
``docs/images/admin-transcript-files.png``."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.db import connections
from django.urls import reverse

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import feedback, uploads
from tests.attachment_helpers import files_message, png
from tests.browser import axe_violations, browser, save_screenshot  # noqa: F401  (the fixture)
from tests.conftest import assistant_message, user_message
from tests.conversations import make_conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.once]

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
CHANGE = "admin:django_agent_sessions_agentsession_change"
PDF = b"%PDF-1.7\n" + b"1 0 obj << /Type /Catalog >> endobj\n" * 40 + b"%%EOF\n"


@pytest.fixture(scope="module", autouse=True)
def _orm_beside_playwright(django_db_setup):
    """Playwright's sync API leaves an event loop set on this thread (see test_browser)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


def docs_screenshot(page: Any, name: str) -> None:
    path = save_screenshot(page, name)
    if os.environ.get("SAVE_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(path, DOCS_IMAGES / f"{name}.png")


def staff_page(browser: Any, live_server: Any) -> Any:  # noqa: F811
    User.objects.create_superuser("staff", "staff@example.com", "pw-staff")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(live_server.url + reverse("admin:login"))
    page.fill("#id_username", "staff")
    page.fill("#id_password", "pw-staff")
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")
    return page


def rated_reply(username: str, session_id: str, question: str, answer: str, agent: str) -> int:
    """A conversation of ``username``'s whose reply a run of ``agent`` wrote; its id."""
    owner, _ = User.objects.get_or_create(username=username)
    conversation = make_conversation(
        session_id, [user_message(question), assistant_message(answer)], owner=owner
    )
    question_id, reply_id = (
        SessionItem.objects.filter(session=conversation).order_by("id").values_list("id", flat=True)
    )
    AgentRun.objects.create(
        session=conversation,
        status=AgentRun.Status.COMPLETED,
        agent_name=agent,
        history_item_id=question_id - 1,
        last_item_id=reply_id,
    )
    return reply_id


def _added(session: DjangoSession, items: list[Any]) -> None:
    try:
        async_to_sync(session.add_items)(items)
    finally:
        connections.close_all()


def test_staff_filter_the_ratings_and_open_a_rated_reply(browser, live_server):  # noqa: F811
    ratings = [
        ("alice", "support-42", "Where is my parcel?", "It left the depot today.", "Support", 1),
        ("bob", "support-43", "Can I pay by invoice?", "No, cards only.", "Support", -1),
        ("chen", "sums-7", "What is 12 * 7?", "It is 85.", "Calculator", -1),
        ("dana", "sums-8", "What is 9 + 10?", "It is 19.", "Calculator", 1),
    ]
    given = {}
    for username, session_id, question, answer, agent, rating in ratings:
        reply_id = rated_reply(username, session_id, question, answer, agent)
        owner = User.objects.get(username=username)
        tags, comment = ([], "") if rating == 1 else (["inaccurate"], "Wrong, check it.")
        if session_id == "support-43":
            tags, comment = ["incomplete", "unhelpful"], "Invoices exist for companies."
        given[session_id] = feedback.give(
            owner, session_id, reply_id, rating=rating, comment=comment, tags=tags
        )
    page = staff_page(browser, live_server)
    page.goto(live_server.url + reverse("admin:django_agent_sessions_feedback_changelist"))
    page.wait_for_selector("#result_list")
    assert page.locator("#result_list tbody tr").count() == 4
    filters = page.inner_text("#changelist-filter")
    for heading in ("By rating", "By tag", "By agent", "By changed"):
        assert heading.lower() in filters.lower(), filters
    assert axe_violations(page) == []
    docs_screenshot(page, "admin-feedback")

    page.locator("#changelist-filter").get_by_role("link", name="Calculator").click()
    page.wait_for_selector("#changelist-filter li.selected >> text=Calculator")
    rows = page.locator("#result_list tbody tr")
    assert rows.count() == 2
    assert "sums-7" in rows.all_inner_texts()[0] + rows.all_inner_texts()[1]
    page.locator("#changelist-filter").get_by_role("link", name="inaccurate").click()
    page.wait_for_selector("#changelist-filter li.selected >> text=inaccurate")
    assert page.locator("#result_list tbody tr").count() == 1

    change = reverse("admin:django_agent_sessions_feedback_change", args=[given["sums-7"].pk])
    page.goto(live_server.url + change)
    page.get_by_role("link", name="the rated reply").click()
    target = page.locator(":target")
    target.wait_for()
    assert "It is 85." in target.inner_text()
    page.context.close()


def test_staff_download_a_file_from_the_transcript(browser, live_server, file_storage):  # noqa: F811
    owner = User.objects.create_user("alice")
    image = png(64, 48)
    uploads.accept(owner, "support-51", name="parcel.png", data=image, content_type="image/png")
    uploads.accept(
        owner, "support-51", name="invoice-1042.pdf", data=PDF, content_type="application/pdf"
    )
    message = files_message(
        "The parcel came like this. Here is the invoice.",
        image=image,
        file=("invoice-1042.pdf", "application/pdf", PDF),
    )
    reply = assistant_message("I'm sorry it arrived damaged: a replacement ships tomorrow.")
    session = DjangoSession("support-51", owner=owner, offload_chars=0)
    # Playwright keeps an event loop on this thread, where async_to_sync refuses to run.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(_added, session, [message, reply]).result()
    AgentSession.objects.filter(session_id="support-51").update(title="Damaged parcel")
    conversation = AgentSession.objects.get(session_id="support-51")

    page = staff_page(browser, live_server)
    page.goto(live_server.url + reverse(CHANGE, args=[conversation.pk]))
    page.wait_for_selector(".agent-transcript")
    links = page.locator(".agent-transcript").get_by_role("link", name="invoice-1042.pdf")
    assert links.count() == 1
    assert "application/pdf" in page.inner_text(".agent-transcript")
    assert axe_violations(page) == []
    docs_screenshot(page, "admin-transcript-files")

    with page.expect_download() as downloading:
        links.click()
    download = downloading.value
    assert download.suggested_filename == "invoice-1042.pdf"
    assert Path(download.path()).read_bytes() == PDF
    with page.expect_download() as downloading:
        page.locator(".agent-transcript").get_by_role("link", name="parcel.png").click()
    assert Path(downloading.value.path()).read_bytes() == image
    page.context.close()
