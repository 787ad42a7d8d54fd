"""The conversation admin through the Django test client, as each kind of user."""

from __future__ import annotations

import json
import warnings

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from django_agent_sessions.models import AgentSession, SessionItem
from tests.conversations import (
    XSS_IMG,
    XSS_SCRIPT,
    add_many_items,
    item_selects,
    make_conversation,
    transcript_items,
    xss_items,
)

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:django_agent_sessions_agentsession_changelist")


def change_url(conversation: AgentSession) -> str:
    return reverse("admin:django_agent_sessions_agentsession_change", args=[conversation.pk])


def delete_url(conversation: AgentSession) -> str:
    return reverse("admin:django_agent_sessions_agentsession_delete", args=[conversation.pk])


def staff(username: str, *codenames: str) -> User:
    user: User = User.objects.create_user(username, f"{username}@example.com", "pw", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="django_agent_sessions", codename__in=codenames
        )
    )
    return user


@pytest.fixture
def viewer(client):
    client.force_login(staff("viewer", "view_agentsession"))
    return client


@pytest.fixture
def deleter(client):
    user = staff(
        "deleter", "view_agentsession", "delete_agentsession", "view_sessionitem",
        "delete_sessionitem",
    )  # fmt: skip
    client.force_login(user)
    return client


@pytest.fixture
def superuser(client):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def action(client, name: str, conversations: list[AgentSession], **extra: str):
    data = {"action": name, "_selected_action": [c.pk for c in conversations], **extra}
    return client.post(CHANGELIST, data)


# Who may do what -------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client):
    conversation = make_conversation("c-1", transcript_items())
    for url in (CHANGELIST, change_url(conversation), delete_url(conversation)):
        response = client.get(url)
        assert response.status_code == 302
        assert reverse("admin:login") in response["Location"]


def test_staff_without_permission_is_refused(client):
    client.force_login(staff("nobody"))
    assert client.get(CHANGELIST).status_code == 403


def test_viewer_reads_everything_and_changes_nothing(viewer):
    conversation = make_conversation("c-1", transcript_items(), title="Weather")
    listing = viewer.get(CHANGELIST)
    assert listing.status_code == 200
    assert "c-1" in listing.text
    assert "addlink" not in listing.text
    actions = [choice[0] for choice in listing.context["action_form"].fields["action"].choices]
    assert actions == ["", "export_json"]

    page = viewer.get(change_url(conversation))
    assert page.status_code == 200
    assert "It is sunny in Paris." in page.text
    assert 'name="_save"' not in page.text
    assert "deletelink" not in page.text

    assert viewer.post(change_url(conversation), {"title": "hacked"}).status_code == 403
    assert viewer.get(delete_url(conversation)).status_code == 403
    assert viewer.post(delete_url(conversation), {"post": "yes"}).status_code == 403
    add = reverse("admin:django_agent_sessions_agentsession_add")
    assert viewer.get(add).status_code == 403
    action(viewer, "clear_history", [conversation], post="yes")
    action(viewer, "delete_selected", [conversation], post="yes")
    conversation.refresh_from_db()
    assert conversation.title == "Weather"
    assert conversation.item_count == 7
    assert SessionItem.objects.filter(session=conversation).count() == 7


def test_superuser_cannot_add_or_edit_either(superuser):
    conversation = make_conversation("c-1", transcript_items(), title="Weather")
    page = superuser.get(change_url(conversation))
    assert 'name="_save"' not in page.text
    assert "deletelink" in page.text
    add = reverse("admin:django_agent_sessions_agentsession_add")
    assert superuser.get(add).status_code == 403
    assert superuser.post(change_url(conversation), {"title": "x"}).status_code == 403
    form = superuser.get(CHANGELIST).context["action_form"]
    actions = [choice[0] for choice in form.fields["action"].choices]
    assert actions == ["", "delete_selected", "export_json", "clear_history"]


def test_session_items_have_no_admin_of_their_own(superuser):
    assert superuser.get("/admin/django_agent_sessions/sessionitem/").status_code == 404


# The list ---------------------------------------------------------------------------------


def test_changelist_shows_columns(superuser):
    owner = User.objects.create_user("alice", "alice@example.com")
    make_conversation("c-alice", transcript_items(), owner=owner, title="Paris weather")
    response = superuser.get(CHANGELIST)
    row = response.text.split("c-alice", 1)[1]
    for text in ("alice", "Paris weather", ">7<"):
        assert text in row


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("q=c-alice", {"c-alice"}),
        ("q=Bob%27s", {"c-bob"}),
        ("q=alice", {"c-alice"}),
        ("q=bob%40example.com", {"c-bob"}),
        ("has_owner=no", {"c-nobody"}),
        ("has_owner=yes", {"c-alice", "c-bob"}),
        ("updated_at__gte=2000-01-01%2000:00:00%2B00:00", {"c-alice", "c-bob", "c-nobody"}),
        ("updated_at__lt=2000-01-01%2000:00:00%2B00:00", set()),
    ],
)
def test_search_and_filters(superuser, query, expected):
    make_conversation("c-alice", [], owner=User.objects.create_user("alice", "a@example.com"))
    bob = User.objects.create_user("bob", "bob@example.com")
    make_conversation("c-bob", [], owner=bob, title="Bob's refund")
    make_conversation("c-nobody", [], title="Anonymous")
    response = superuser.get(f"{CHANGELIST}?{query}")
    assert response.status_code == 200
    shown = {row.session_id for row in response.context["cl"].result_list}
    assert shown == expected


def changelist_queries(client) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(CHANGELIST).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


def test_changelist_query_count_does_not_grow_with_rows(superuser, django_assert_num_queries):
    # 6 queries per page on SQLite, however many conversations and items: session,
    # user, the COUNT, the page's rows joined to their owners, the date hierarchy's
    # range and its dates. PostgreSQL adds one: the planner's row estimate, read
    # before COUNT(*) to skip the COUNT on big tables. No COUNT per row, no payloads.
    expected = 7 if connection.vendor == "postgresql" else 6
    for n in range(3):
        make_conversation(f"c-{n}", transcript_items())
    few = changelist_queries(superuser)
    for n in range(3, 60):
        owner = User.objects.create_user(f"user{n}")
        make_conversation(f"c-{n}", transcript_items(), owner=owner)
    many = changelist_queries(superuser)
    assert len(few) == len(many) == expected, "\n".join(many)
    assert not [sql for sql in many if "payload" in sql]
    assert "Show counts" not in superuser.get(CHANGELIST).text
    with django_assert_num_queries(expected):
        superuser.get(CHANGELIST + "?_facets=True")  # facets stay off even when asked for
    with django_assert_num_queries(expected):
        superuser.get(CHANGELIST + "?p=2")
    with django_assert_num_queries(6):  # filtered lists are counted exactly, on every backend
        superuser.get(CHANGELIST + "?has_owner=yes")


def test_big_unfiltered_list_is_not_counted_on_postgresql(superuser, monkeypatch):
    from django_agent_sessions.admin import listing as app_admin

    for n in range(12):
        make_conversation(f"c-{n}", [])
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {AgentSession._meta.db_table}")
    monkeypatch.setattr(app_admin, "ESTIMATE_ABOVE", 5)
    queries = changelist_queries(superuser)
    counts = [sql for sql in queries if "COUNT(*)" in sql]
    if connection.vendor == "postgresql":
        assert counts == []  # the estimate (12 after ANALYZE) stood in for COUNT(*)
    else:
        assert len(counts) == 1  # SQLite has no estimate; its COUNT is cheap
    filtered = superuser.get(CHANGELIST + "?q=c-1")
    assert filtered.context["cl"].result_count == 3  # c-1, c-10, c-11: counted exactly


# The transcript ---------------------------------------------------------------------------


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
    # One more than the page of items: the stopped or failed runs shown among them.
    assert len(small_queries) == len(last_page) == 7, "\n".join(small_queries)
    with django_assert_num_queries(7):
        viewer.get(change_url(large) + "?page=100")
    assert len(item_selects([{"sql": sql} for sql in last_page])) == 1


# Escaping ---------------------------------------------------------------------------------


def assert_inert(html: str) -> None:
    for payload in (XSS_SCRIPT, XSS_IMG, "<script>", "<img src=x"):
        assert payload not in html
    assert "&lt;script&gt;" in html


def test_hostile_content_is_inert_on_every_page(superuser):
    conversation = make_conversation("c-<b>x</b>", xss_items(), title=XSS_SCRIPT)
    add_many_items(conversation, 0)
    pages = [
        superuser.get(CHANGELIST),
        superuser.get(CHANGELIST + "?q=script"),
        superuser.get(change_url(conversation)),
        superuser.get(delete_url(conversation)),
        action(superuser, "clear_history", [conversation]),
        action(superuser, "delete_selected", [conversation]),
    ]
    for response in pages:
        assert response.status_code == 200
        assert_inert(response.text)
        assert "<b>x</b>" not in response.text

    export = action(superuser, "export_json", [conversation])
    assert export["Content-Type"] == "application/json"
    assert export["Content-Disposition"].startswith("attachment;")
    assert export["X-Content-Type-Options"] == "nosniff"
    document = json.loads(b"".join(export.streaming_content))
    assert document["conversations"][0]["items"][0]["item"]["content"] == XSS_SCRIPT


# Actions ----------------------------------------------------------------------------------


def test_clear_history_asks_then_clears_and_keeps_the_rows(deleter):
    owner = User.objects.create_user("alice")
    kept = make_conversation("c-kept", transcript_items())
    chosen = [
        make_conversation("c-1", transcript_items(), owner=owner, title="One"),
        make_conversation("c-2", transcript_items()),
    ]
    confirm = action(deleter, "clear_history", chosen)
    assert confirm.status_code == 200
    assert "Are you sure you want to clear the history of the 2 selected conversations?" in (
        confirm.text
    )
    assert "Their 14 items will be deleted" in confirm.text
    assert SessionItem.objects.count() == 21

    done = action(deleter, "clear_history", chosen, post="yes")
    assert done.status_code == 302
    messages = [str(m) for m in deleter.get(done["Location"]).context["messages"]]
    assert messages == ["Cleared 2 conversations; 14 items removed."]
    for conversation in chosen:
        conversation.refresh_from_db()
        assert conversation.item_count == 0
        assert not SessionItem.objects.filter(session=conversation).exists()
    assert chosen[0].owner == owner
    assert chosen[0].title == "One"
    assert SessionItem.objects.filter(session=kept).count() == 7


def test_clear_history_needs_delete_permission_on_items(client):
    client.force_login(staff("half", "view_agentsession", "delete_agentsession"))
    conversation = make_conversation("c-1", transcript_items())
    actions = [c[0] for c in client.get(CHANGELIST).context["action_form"].fields["action"].choices]
    assert "clear_history" not in actions
    action(client, "clear_history", [conversation], post="yes")
    assert SessionItem.objects.filter(session=conversation).count() == 7
    # Deleting the conversation would delete its items too.
    assert "Cannot delete conversation" in client.get(delete_url(conversation)).text
    assert client.post(delete_url(conversation), {"post": "yes"}).status_code == 403


def test_export_action_downloads_items_in_order(viewer):
    conversation = make_conversation("c-1", transcript_items(), title="Weather")
    other = make_conversation("c-2", [{"role": "user", "content": "hi"}])
    response = action(viewer, "export_json", [conversation, other])
    assert response.status_code == 200
    document = json.loads(b"".join(response.streaming_content))
    assert document["format"] == "django-agent-sessions"
    exported = {c["session_id"]: c for c in document["conversations"]}
    assert [entry["item"] for entry in exported["c-1"]["items"]] == transcript_items()
    assert exported["c-1"]["title"] == "Weather"
    assert [entry["item"] for entry in exported["c-2"]["items"]] == [
        {"role": "user", "content": "hi"}
    ]


def test_export_link_on_the_change_page(viewer):
    conversation = make_conversation("c-1", transcript_items())
    export_url = reverse("admin:django_agent_sessions_agentsession_export", args=[conversation.pk])
    assert export_url in viewer.get(change_url(conversation)).text
    response = viewer.get(export_url)
    document = json.loads(b"".join(response.streaming_content))
    assert [c["session_id"] for c in document["conversations"]] == ["c-1"]
    assert viewer.get(export_url.replace(str(conversation.pk), "999999")).status_code == 404


# Deleting without loading items ------------------------------------------------------------


def test_deleting_a_20000_item_conversation_loads_no_items(deleter):
    conversation = make_conversation("c-large", [])
    add_many_items(conversation, 20_000)
    kept = make_conversation("c-kept", transcript_items())
    with CaptureQueriesContext(connection) as confirm_queries:
        confirm = deleter.get(delete_url(conversation))
    assert "Conversation: <a" in confirm.text
    assert "Items: 20000" in confirm.text
    with CaptureQueriesContext(connection) as delete_queries:
        response = deleter.post(delete_url(conversation), {"post": "yes"})
    assert response.status_code == 302
    assert not AgentSession.objects.filter(pk=conversation.pk).exists()
    assert not SessionItem.objects.filter(session_id=conversation.pk).exists()
    assert SessionItem.objects.filter(session=kept).count() == 7
    assert item_selects(confirm_queries.captured_queries) == []
    assert item_selects(delete_queries.captured_queries) == []


def test_delete_selected_loads_no_items(deleter):
    chosen = [make_conversation(f"c-{n}", []) for n in range(3)]
    for conversation in chosen:
        add_many_items(conversation, 500)
    with CaptureQueriesContext(connection) as captured:
        confirm = action(deleter, "delete_selected", chosen)
        assert "Items: 1500" in confirm.text
        done = action(deleter, "delete_selected", chosen, post="yes")
    assert done.status_code == 302
    assert not AgentSession.objects.exists()
    assert not SessionItem.objects.exists()
    assert item_selects(captured.captured_queries) == []


def test_deleting_a_user_deletes_their_conversations_without_loading_items():
    owner = User.objects.create_user("leaving")
    conversation = make_conversation("c-owned", [], owner=owner)
    add_many_items(conversation, 2_000)
    kept = make_conversation("c-kept", transcript_items())
    with CaptureQueriesContext(connection) as captured:
        owner.delete()
    assert not AgentSession.objects.filter(pk=conversation.pk).exists()
    assert not SessionItem.objects.filter(session_id=conversation.pk).exists()
    assert SessionItem.objects.filter(session=kept).count() == 7
    assert item_selects(captured.captured_queries) == []


@pytest.mark.django_db(transaction=True)
async def test_export_streams_under_asgi(async_client):
    from asgiref.sync import sync_to_async

    def prepare() -> list[int]:
        user = User.objects.create_superuser("root", "root@example.com", "pw")
        conversation = make_conversation("c-1", transcript_items())
        add_many_items(conversation, 2_000)
        return [user.pk, conversation.pk]

    user_pk, conversation_pk = await sync_to_async(prepare)()
    await async_client.aforce_login(await User.objects.aget(pk=user_pk))
    data = {"action": "export_json", "_selected_action": [conversation_pk]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Django warns when it must buffer a sync iterator
        response = await async_client.post(CHANGELIST, data)
        assert response.is_async
        body = b"".join([chunk async for chunk in response.streaming_content])
    (exported,) = json.loads(body)["conversations"]
    assert len(exported["items"]) == 2_007


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
