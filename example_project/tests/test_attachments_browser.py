"""Files in the packaged chat, in headless Chromium: attached by the button, by dropping
and by pasting, uploaded with their progress, removed with the keyboard, refused with a
reason, described by the demo model, and shown in the transcript after a reload."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from example_project.tests.conftest import log_in, wait_connected
from example_project.tests.servers import create_user, query
from example_project.tests.sizes import desktop_and_phone
from example_project.tests.test_chat_ui_browser import (  # noqa: F401 - fixtures
    REPLY,
    USER,
    docs_screenshot,
    new_page,
)
from example_project.tests.test_e2e_browser import send, wait_idle
from tests.attachment_helpers import png
from tests.browser import axe_violations

pytestmark = pytest.mark.browser

ATTACHMENTS = (
    "SELECT a.name, a.content_type, a.size FROM django_agent_sessions_attachment a "
    "JOIN auth_user u ON u.id = a.owner_id WHERE u.username = %s ORDER BY a.id"
)
# Hands the page a file the way a drop or a paste does (a DataTransfer holding a File);
# a number instead of data: a PDF of that many bytes, made in the page.
GIVE = """([how, name, type, data]) => {
  const bytes = typeof data === "number" ? new Uint8Array(data)
                                         : Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  if (typeof data === "number") bytes.set([37, 80, 68, 70, 45]);  // "%PDF-"
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const target = how === "drop" ? document.getElementById("composer")
                                : document.getElementById("message");
  const event = how === "drop"
    ? new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true })
    : new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true });
  target.dispatchEvent(event);
}"""


PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
# Every value the upload's <progress> shows.
RECORD_PROGRESS = """() => {
  window.__progress = [];
  new MutationObserver((changes) => changes.forEach((change) => {
    if (change.target.tagName === "PROGRESS") window.__progress.push(Number(change.target.value));
  })).observe(document.getElementById("attachment-list"),
              { attributes: true, attributeFilter: ["value"], subtree: true });
}"""


def give(page: Any, how: str, name: str, content_type: str, data: bytes | int) -> None:
    given = data if isinstance(data, int) else base64.b64encode(data).decode()
    page.evaluate(GIVE, [how, name, content_type, given])


def uploaded(page: Any, count: int) -> None:
    """Until ``count`` files are listed and none is uploading."""
    page.locator(".attachment").nth(count - 1).wait_for()
    page.locator(".attachment.is-uploading").first.wait_for(state="detached")


@desktop_and_phone("chat-files")
def test_files_are_attached_sent_described_and_shown_after_a_reload(
    chat_server,
    chat_user,
    new_page,  # noqa: F811
    name,
    options,
):
    page = new_page(**options)
    log_in(page, chat_server.url, chat_user)
    image = png(40, 20)
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach files", exact=True).click()
    chooser.value.set_files({"name": "dots.png", "mimeType": "image/png", "buffer": image})
    give(page, "drop", "report.pdf", "application/pdf", PDF)
    give(page, "paste", "notes.txt", "text/plain", b"milk, eggs\n")
    uploaded(page, 3)
    assert page.locator(".attachment-preview").count() == 1  # the image, from the server

    # Removed with the keyboard: focus moves to the next file's Remove button.
    give(page, "drop", "extra.txt", "text/plain", b"to be removed\n")
    uploaded(page, 4)
    page.get_by_role("button", name="Remove notes.txt").focus()
    page.keyboard.press("Enter")
    page.locator(".attachment").nth(3).wait_for(state="detached")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        "Remove extra.txt"
    )
    page.keyboard.press("Enter")
    page.locator(".attachment").nth(2).wait_for(state="detached")
    assert page.evaluate("document.documentElement.scrollWidth") <= options["viewport"]["width"]
    assert axe_violations(page) == []
    docs_screenshot(page, f"{name}-attached")

    send(page, "What did I send?")
    wait_idle(page)
    reply = page.locator(f"{REPLY} .text").last.text_content() or ""
    assert reply.startswith(
        # An image part carries no file name: the model says what it was given.
        f"I received 2 files: an image (image/png, {len(image):,} bytes, 40 x 20 pixels); "
        f"report.pdf (application/pdf, {len(PDF)} bytes)."
    )
    assert page.locator(".attachment").count() == 0  # the composer is empty again
    stored = query(chat_server.env, ATTACHMENTS, (chat_user[0],))
    # Uploads run side by side: stored in whatever order they finished.
    assert sorted(row[0] for row in stored) == ["dots.png", "extra.txt", "notes.txt", "report.pdf"]

    page.reload()
    wait_connected(page)
    message = page.locator(USER).last
    message.locator("img").wait_for()
    assert message.locator(".text").text_content() == "What did I send?"
    assert (
        page.evaluate(  # the image loaded, through the owner-only view
            "document.querySelector('.message-file img').naturalWidth"
        )
        == 40
    )
    link = message.get_by_role("link", name="report.pdf")
    assert link.get_attribute("href").endswith("?download=1")
    assert axe_violations(page) == []
    docs_screenshot(page, name)

    # Someone else asking for the image gets what a missing file gets.
    image_url = message.locator("img").get_attribute("src")
    other = new_page()
    log_in(other, chat_server.url, create_user(chat_server.env))
    assert other.request.get(image_url).status == 404  # an absolute URL (img.src)


def test_what_cannot_be_sent_is_refused_with_a_reason(chat_server, chat_user, new_page):  # noqa: F811
    page = new_page()
    log_in(page, chat_server.url, chat_user)
    banner = page.locator("#error-banner")
    # Markup named like an image: the server reads the bytes and refuses it.
    give(page, "drop", "innocent.png", "image/png", b"<!doctype html><script>1</script>")
    banner.get_by_text("This kind of file cannot be sent").wait_for()
    assert page.locator(".attachment").count() == 0
    # Too large for the settings (the example's UPLOAD_MAX_MB): refused at once, unsent.
    give(page, "drop", "big.pdf", "application/pdf", 26 * 1024 * 1024)
    banner.get_by_text("big.pdf is larger than 25 MB.").wait_for()
    assert query(chat_server.env, ATTACHMENTS, (chat_user[0],)) == []

    # A large upload shows its progress (the upload throttled to about 5 MB/s).
    network = page.context.new_cdp_session(page)
    network.send("Network.enable")
    network.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 5e6},
    )
    page.evaluate(RECORD_PROGRESS)
    give(page, "drop", "large.pdf", "application/pdf", 20 * 1024 * 1024)
    uploaded(page, 1)
    shown = page.evaluate("window.__progress")
    assert any(0 < value < 100 for value in shown), shown
