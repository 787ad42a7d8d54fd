"""The conversation admin's transcript: every kind of item, paging, language and Markdown."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import uploads
from tests.admin.helpers import change_url, staff
from tests.attachment_helpers import data_url, png
from tests.conversations import add_many_items, item_selects, make_conversation, transcript_items

pytestmark = pytest.mark.django_db


def test_transcript_shows_every_kind_of_item(viewer):
    conversation = make_conversation("c-1", transcript_items())
    page = viewer.get(change_url(conversation)).text
    assert "What&#x27;s the weather in Paris?" in page
    assert "Tool call: get_weather" in page
    assert "&quot;city&quot;: &quot;Paris&quot;" in page
    assert "Output of get_weather" in page  # labelled by its tool, not its call id
    assert "Sunny, 21 C" in page
    assert "Handoff: transfer_to_billing_agent" in page
    assert "<summary>Reasoning summary</summary>" in page
    assert "Need the weather tool." in page
    assert "It is sunny in Paris." in page
    assert page.count("<summary>Raw JSON</summary>") == 7
    assert page.index("What&#x27;s the weather") < page.index("It is sunny in Paris.")


def test_long_tool_output_is_folded(viewer):
    long_output = "line\n" * 50
    conversation = make_conversation(
        "c-1",
        [
            {"type": "function_call", "call_id": "c", "name": "dump", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": long_output},
        ],
    )
    page = viewer.get(change_url(conversation)).text
    assert "(250 characters)</summary>" in page


def test_transcript_pages_through_a_long_conversation(viewer):
    conversation = make_conversation("c-long", [])
    add_many_items(conversation, 250)
    first = viewer.get(change_url(conversation))
    assert "message 0<" in first.text
    assert "message 99<" in first.text
    assert "message 100<" not in first.text
    assert "Page 1 of 3 (250 items)" in first.text
    last = viewer.get(change_url(conversation) + "?page=3")
    assert "message 200<" in last.text
    assert "message 249<" in last.text
    assert "message 199<" not in last.text
    assert 'start="201"' in last.text
    assert viewer.get(change_url(conversation) + "?page=99").context["transcript"]["number"] == 3
    assert viewer.get(change_url(conversation) + "?page=x").context["transcript"]["number"] == 1


def change_page_queries(client, url: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


def test_change_page_reads_one_page_of_a_20000_item_conversation(viewer, django_assert_num_queries):
    small = make_conversation(
        "c-small", transcript_items(), owner=User.objects.create_user("alice")
    )
    large = make_conversation("c-large", [])
    add_many_items(large, 20_000)
    small_queries = change_page_queries(viewer, change_url(small))
    last_page = change_page_queries(viewer, change_url(large) + "?page=200")
    # session, user, the user's and groups' permissions, the conversation joined to
    # its owner, one page of items.
    # One more than the page of items: the stopped or failed runs shown among them; and
    # the conversations branched from this one.
    assert len(small_queries) == len(last_page) == 8, "\n".join(small_queries)
    with django_assert_num_queries(8):
        viewer.get(change_url(large) + "?page=100")
    assert len(item_selects([{"sql": sql} for sql in last_page])) == 1


def test_pages_follow_the_admin_language_and_direction(viewer, settings):
    settings.LANGUAGE_CODE = "ar"
    conversation = make_conversation("c-1", [{"role": "user", "content": "مرحبا بالعالم"}])
    page = viewer.get(change_url(conversation)).text
    assert 'dir="rtl"' in page
    assert "إغلاق" in page  # the admin's own "Close", translated
    assert '<div class="agent-entry-body agent-entry-text" dir="auto">مرحبا بالعالم</div>' in page


def test_tool_outputs_are_labelled_by_tool_across_pages(viewer, monkeypatch):
    from django_agent_sessions.admin.conversations import AgentSessionAdmin

    monkeypatch.setattr(AgentSessionAdmin, "transcript_per_page", 1)
    call = {"type": "function_call", "call_id": "call_9", "name": "get_time", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_9", "output": "noon"}
    conversation = make_conversation("c-pages", [call, output])
    page = viewer.get(change_url(conversation) + "?page=2").text
    assert "Output of get_time" in page


def test_assistant_markdown_is_rendered_and_sanitized(viewer):
    reply = {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "annotations": [],
                "text": "**bold** <script>alert(1)</script> <img src=x onerror=alert(1)> "
                "[x](javascript:alert(1))\n\n```\ncode\n```",
            }
        ],
    }
    user = {"role": "user", "content": "<b>not bold</b> **not bold**"}
    conversation = make_conversation("c-md", [user, reply])
    page = viewer.get(change_url(conversation)).text
    assert "<strong>bold</strong>" in page
    assert "<pre><code>code\n</code></pre>" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    assert "<img src=x" not in page
    assert 'href="javascript:' not in page
    assert "&lt;b&gt;not bold&lt;/b&gt; **not bold**" in page  # users' text stays text


@pytest.mark.django_db(transaction=True)
def test_a_messages_files_are_download_links_for_staff_who_may_view_it(
    viewer, client, file_storage
):
    owner = User.objects.create_user("owner")
    image = png(9, 9)
    stored = uploads.accept(
        owner, "c-files", name="<b>x</b>.png", data=image, content_type="image/png"
    )
    message = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": data_url(image)},
        ],
    }
    async_to_sync(DjangoSession("c-files", owner=owner, offload_chars=0).add_items)([message])
    conversation = AgentSession.objects.get(session_id="c-files")

    page = viewer.get(change_url(conversation)).text
    link = f"{change_url(conversation).removesuffix('change/')}files/{stored.id}/?download=1"
    assert f'<a href="{link}" download>&lt;b&gt;x&lt;/b&gt;.png</a>' in page
    assert f"image/png, {len(image)}\xa0bytes" in page
    response = viewer.get(link)
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment")
    assert b"".join(response.streaming_content) == image

    client.force_login(staff("nobody"))  # staff without the view permission
    assert client.get(link).status_code == 403


@pytest.mark.django_db(transaction=True)
def test_a_branch_and_its_original_link_to_each_other(viewer):
    source = DjangoSession("c-original")
    async_to_sync(source.add_items)([{"role": "user", "content": "hello"}])
    async_to_sync(source.fork)("c-branch")
    original = AgentSession.objects.get(session_id="c-original")
    branch = AgentSession.objects.get(session_id="c-branch")

    assert (
        f'<a href="{change_url(branch)}">hello (branch)</a>'
        in viewer.get(change_url(original)).text
    )
    assert f'href="{change_url(original)}"' in viewer.get(change_url(branch)).text
