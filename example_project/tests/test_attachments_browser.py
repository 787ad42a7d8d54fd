"""Files in the packaged chat, in headless Chromium: attached by the button, by dropping
and by pasting, uploaded with their progress, removed with the keyboard, refused with a
reason, described by the demo model, and shown in the transcript after a reload."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from example_project.tests.conftest import log_in, wait_connected
from example_project.tests.servers import query
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
# Hands the page a file the way a drop or a paste does (a DataTransfer holding a File).
GIVE = """([how, name, type, data]) => {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const target = how === "drop" ? document.getElementById("composer")
                                : document.getElementById("message");
  const event = how === "drop"
    ? new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true })
    : new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true });
  target.dispatchEvent(event);
}"""


def give(page: Any, how: str, name: str, content_type: str, data: bytes) -> None:
    page.evaluate(GIVE, [how, name, content_type, base64.b64encode(data).decode()])


def uploaded(page: Any, count: int) -> None:
    """Until ``count`` files are listed and none is uploading."""
    page.locator(".attachment").nth(count - 1).wait_for()
    page.locator(".attachment.is-uploading").first.wait_for(state="detached")


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("chat-files", {"viewport": {"width": 1280, "height": 800}}),
        (
            "chat-files-phone-dark",
            {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "color_scheme": "dark"},
        ),
    ],
)
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
        page.get_by_role("button", name="Attach files").click()
    chooser.value.set_files({"name": "dots.png", "mimeType": "image/png", "buffer": image})
    give(page, "drop", "notes.txt", "text/plain", b"milk, eggs\n")
    give(page, "paste", "extra.txt", "text/plain", b"to be removed\n")
    uploaded(page, 3)
    assert page.locator(".attachment-preview").count() == 1  # the image, from the server

    # Removed with the keyboard: focus moves to the next file's Remove button.
    page.get_by_role("button", name="Remove extra.txt").focus()
    page.keyboard.press("Enter")
    page.locator(".attachment").nth(2).wait_for(state="detached")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        "Remove notes.txt"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= options["viewport"]["width"]
    assert axe_violations(page) == []
    docs_screenshot(page, f"{name}-attached")

    send(page, "What did I send?")
    wait_idle(page)
    reply = page.locator(f"{REPLY} .text").last.text_content() or ""
    assert reply.startswith(
        # An image part carries no file name: the model says what it was given.
        f"I received 2 files: an image (image/png, {len(image):,} bytes, 40 x 20 pixels); "
        "notes.txt (text/plain, 11 bytes)."
    )
    assert page.locator(".attachment").count() == 0  # the composer is empty again
    stored = query(chat_server.env, ATTACHMENTS, (chat_user[0],))
    # Uploads run side by side: stored in whatever order they finished.
    assert sorted(row[0] for row in stored) == ["dots.png", "extra.txt", "notes.txt"]

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
    link = message.get_by_role("link", name="notes.txt")
    assert link.get_attribute("href").endswith("?download=1")
    assert axe_violations(page) == []
    docs_screenshot(page, name)


def test_what_cannot_be_sent_is_refused_with_a_reason(chat_server, chat_user, new_page):  # noqa: F811
    page = new_page()
    log_in(page, chat_server.url, chat_user)
    banner = page.locator("#error-banner")
    # Markup named like an image: the server reads the bytes and refuses it.
    give(page, "drop", "innocent.png", "image/png", b"<!doctype html><script>1</script>")
    banner.get_by_text("This kind of file cannot be sent").wait_for()
    assert page.locator(".attachment").count() == 0
    # Too large for the settings: refused at once, nothing is uploaded.
    give(page, "drop", "big.pdf", "application/pdf", b"%PDF-" + b"0" * (10 * 1024 * 1024))
    banner.get_by_text("big.pdf is larger than 10 MB.").wait_for()
    assert query(chat_server.env, ATTACHMENTS, (chat_user[0],)) == []
