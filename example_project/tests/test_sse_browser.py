"""The packaged chat over Server-Sent Events, in headless Chromium against a live uvicorn.

The example project with ``CHAT_TRANSPORT=sse`` under uvicorn: the page streams over an
``EventSource`` and sends its frames as POSTs. Each stream ends after 4 seconds
(``SSE_STREAM_SECONDS``), so every long reply below crosses several reconnections: the
browser sends ``Last-Event-ID`` and the server answers with the conversation's state.
The websocket's browser tests run here as they are, on this server: conversations, tool
calls, stop, reload, approvals, files, and rating a reply.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from example_project.tests.conftest import log_in, wait_for_mark
from example_project.tests.servers import (
    ServerDatabase,
    UvicornServer,
    query,
    server_environment,
)
from example_project.tests.test_approvals_browser import (  # noqa: F401 - run over SSE
    chat_page,
    test_approve_and_reject_a_tool_call,
)
from example_project.tests.test_attachments_browser import (  # noqa: F401 - run over SSE
    test_files_are_attached_sent_described_and_shown_after_a_reload,
    test_what_cannot_be_sent_is_refused_with_a_reason,
)
from example_project.tests.test_chat_turns_browser import (  # noqa: F401 - run over SSE
    test_a_reply_is_rated_with_the_keyboard_and_stays_rated,
)
from example_project.tests.test_chat_ui_browser import new_page  # noqa: F401 - its fixture
from example_project.tests.test_e2e_browser import (  # noqa: F401 - run over SSE
    context,
    last_assistant_text,
    page,
    send,
    test_a_reload_mid_run_picks_the_run_up_again,
    test_chat_streams_replies_shows_tool_calls_and_keeps_history,
    test_stop_ends_a_long_reply,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.long(60)]

STREAM_SECONDS = 4


@pytest.fixture
def chat_server(server_database: ServerDatabase, log_dir: Path) -> Iterator[UvicornServer]:
    """One uvicorn worker per test, the chat over SSE, streams that end every few seconds."""
    env = server_environment(
        server_database.url, CHAT_TRANSPORT="sse", SSE_STREAM_SECONDS=str(STREAM_SECONDS)
    )
    server = UvicornServer("sse", log_dir, env)
    server.start()
    yield server
    server.close()


def test_the_page_uses_sse_and_a_long_reply_survives_reconnections(chat_server, chat_user, page):  # noqa: F811
    log_in(page, chat_server.url, chat_user)
    assert page.locator("body").get_attribute("data-transport") == "sse"
    events = []
    page.on("request", lambda r: events.append(r) if r.url.endswith("/events/") else None)
    send(page, "Tell me a long story")
    wait_idle(page)
    shown = last_assistant_text(page)
    stored = query(
        chat_server.env,
        "SELECT partial_text, status FROM django_agent_sessions_agentrun ORDER BY id DESC",
        (),
    )
    assert stored[0][1] == "completed"
    assert len(shown) > 3000, "the story is ~5,800 characters"
    assert len(events) >= 2, "the story outlasts one stream: the browser reconnected"
    page.reload()
    page.locator(".message-assistant .text").last.wait_for()
    assert last_assistant_text(page).strip() == shown.strip()


def test_a_rating_being_written_stays_when_the_stream_comes_back(chat_server, chat_user, page):  # noqa: F811
    """A stream that ends with nothing new to tell leaves the page as the reader has it:
    the rating form, the comment half written, the focus in it."""
    log_in(page, chat_server.url, chat_user)
    send(page, "What is (12 + 30) * 2?")
    wait_idle(page)
    page.locator(".message-assistant").last.get_by_role("button", name="Bad reply").click()
    comment = page.locator(".rating-form textarea")
    comment.fill("half a thought")
    wait_for_mark(page, "das:history-kept", timeout_ms=(STREAM_SECONDS + 10) * 1000)
    assert comment.input_value() == "half a thought"
    assert page.evaluate("document.activeElement.name") == "comment"
