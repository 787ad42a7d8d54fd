"""The conversation admin's list: its columns, search and filters, and the queries a page costs."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_agent_sessions.models import AgentSession
from tests.admin.helpers import CHANGELIST
from tests.conversations import make_conversation, transcript_items

pytestmark = pytest.mark.django_db


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
    # 7 queries per page on SQLite, however many conversations and items: session,
    # user, the agent filter's choices (the agents of the newest runs), the COUNT, the
    # page's rows joined to their owners, the date hierarchy's range and its dates.
    # PostgreSQL adds one: the planner's row estimate, read before COUNT(*) to skip the
    # COUNT on big tables. No COUNT per row, no payloads.
    expected = 8 if connection.vendor == "postgresql" else 7
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
    with django_assert_num_queries(7):  # filtered lists are counted exactly, on every backend
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


def test_search_finds_what_was_said_in_anyones_conversation(superuser):
    alice = User.objects.create_user("alice")
    said = [{"role": "user", "content": "Where is my parcel?"}]
    make_conversation("c-parcel", said, owner=alice, title="Delivery")
    make_conversation("c-other", [{"role": "user", "content": "Hello"}], title="Parcel notes")
    make_conversation("c-none", [{"role": "user", "content": "Nothing here"}])
    response = superuser.get(f"{CHANGELIST}?q=parcel")
    assert {row.session_id for row in response.context["cl"].result_list} == {
        "c-parcel",
        "c-other",
    }
