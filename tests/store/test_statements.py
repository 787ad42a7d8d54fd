"""``store.statements``: the app's SQL text, built once per vendor and placeholder style.

Besides the text itself (quoted table names, ``?`` placeholders for the SQLite driver),
each statement is run here on the test database, vendor by vendor, to check what it does:
the conversation lock that says whether ``updated_at`` must move, the pop of exactly the
newest item, a count that never goes below zero.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import statements
from tests.conftest import user_message
from tests.store.helpers import stored, user, write

pytestmark = pytest.mark.django_db


def run(sql: str, params: list[Any]) -> list[Any]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall()) if cursor.description else []


def a_second_ago() -> Any:
    return connection.ops.adapt_datetimefield_value(timezone.now() - timedelta(seconds=1))


def test_statements_are_built_once_per_vendor_and_placeholder_style() -> None:
    general = statements.statements(connection)
    qmark = statements.statements(connection, qmark=True)
    assert statements.statements(connection) is general
    assert statements.statements(connection, qmark=True) is qmark
    assert (general.qmark, qmark.qmark) == (False, True)
    texts = ["pop", "read_all", "read_newest", "newest_ids", "delete_from", "recount", "touch"]
    pairs = [(getattr(general, name), getattr(qmark, name)) for name in texts]
    pairs += [(general.lock("add", True), qmark.lock("add", True))]
    pairs += [(general.insert(3), qmark.insert(3))]
    for percent, question in pairs:
        assert "%s" in percent
        assert "?" not in percent
        # The same statement, placeholder for placeholder.
        assert question == percent.replace("%s", "?")


def test_only_quoted_table_names_are_interpolated() -> None:
    sessions = statements.table(connection, AgentSession)
    items = statements.table(connection, SessionItem)
    assert sessions == connection.ops.quote_name(AgentSession._meta.db_table)
    general = statements.statements(connection)
    assert sessions in general.lock("reset", False)
    assert items in general.pop
    assert statements.delete_items(connection, 3).count("%s") == 3
    assert statements.lock_many(connection, 2, stale_only=True).count("%s") == 3
    with pytest.raises(KeyError):
        general.lock("double", False)  # not a count change the store makes


def test_the_lock_updates_the_count_and_fills_only_an_empty_title(session_id: str) -> None:
    row = write(session_id, user_message("a"))
    sql = statements.statements(connection)
    found = run(sql.lock("add", True), [2, "First", session_id, a_second_ago()])
    assert [(pk, owner) for pk, owner, _ in found] == [(row.pk, None)]
    run(sql.lock("add", True), [1, "Second", session_id, a_second_ago()])
    assert AgentSession.objects.values_list("item_count", "title").get(pk=row.pk) == (4, "First")
    run(sql.lock("pop", False), [session_id, a_second_ago()])
    assert AgentSession.objects.get(pk=row.pk).item_count == 3
    run(sql.lock("reset", False), [session_id, a_second_ago()])
    assert AgentSession.objects.get(pk=row.pk).item_count == 0
    run(sql.lock("pop", False), [session_id, a_second_ago()])  # never below zero
    assert AgentSession.objects.get(pk=row.pk).item_count == 0
    assert run(sql.lock("reset", False), ["no-such", a_second_ago()]) == []


def test_the_lock_says_when_updated_at_must_move(session_id: str) -> None:
    owner, now = user("alice"), timezone.now()
    row = write(session_id, user_message("a"), owner_id=owner.pk)
    sql = statements.statements(connection)

    def must_move() -> bool:
        found = run(sql.lock("add", False), [0, session_id, a_second_ago()])
        return bool(found[0][2])

    AgentSession.objects.filter(pk=row.pk).update(updated_at=now)
    assert not must_move()  # within the resolution: left alone
    AgentSession.objects.filter(pk=row.pk).update(updated_at=now - timedelta(seconds=5))
    assert must_move()  # older than the resolution
    # Recent, but another conversation of the same owner is more recent: the owner's list
    # must stay in write order.
    AgentSession.objects.filter(pk=row.pk).update(updated_at=now)
    other = write("other", user_message("b"), owner_id=owner.pk)
    AgentSession.objects.filter(pk=other.pk).update(updated_at=now + timedelta(milliseconds=5))
    assert must_move()
    run(sql.touch, [connection.ops.adapt_datetimefield_value(now + timedelta(seconds=1)), row.pk])
    assert not must_move()


def test_pop_deletes_exactly_the_newest_item(session_id: str) -> None:
    row = write(session_id, user_message("a"), user_message("b"))
    write("other", user_message("elsewhere"))
    popped = run(statements.statements(connection).pop, [row.pk])
    assert popped == [('{"role":"user","content":"b"}',)]
    assert stored(session_id) == [user_message("a")]
    assert stored("other") == [user_message("elsewhere")]


def test_recount_never_goes_below_zero(session_id: str) -> None:
    row = write(session_id, user_message("a"), user_message("b"))
    sql = statements.statements(connection)
    run(sql.recount, [3, 3, row.pk])
    assert AgentSession.objects.get(pk=row.pk).item_count == 5
    run(sql.recount, [-9, -9, row.pk])
    assert AgentSession.objects.get(pk=row.pk).item_count == 0


def test_only_postgresql_has_a_row_estimate() -> None:
    estimate = statements.row_estimate(connection)
    if connection.vendor == "postgresql":
        assert estimate is not None
        assert run(estimate, [AgentSession._meta.db_table])[0][0] >= -1
    else:
        assert estimate is None
