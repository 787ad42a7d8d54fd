"""``store.clock``: an operation's time, and the two values of it the database stores and
compares (``stamp`` and ``threshold``).

``tests/test_shortcuts_encoding.py`` checks that both are the text Django itself would
store; these check what the store relies on in the database: a stamp reads back as the
time it was taken, stamps sort as their times do (whole seconds and microseconds mixed),
and the threshold is exactly one resolution earlier.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import clock
from django_agent_sessions.store.statements import statements

pytestmark = pytest.mark.django_db


def stamp(row: AgentSession, value: object) -> None:
    """Write ``value`` as the row's updated_at, as the store does (``Statements.touch``)."""
    with connection.cursor() as cursor:
        cursor.execute(statements(connection).touch, [value, row.pk])


def older_than(value: object) -> list[str]:
    """The conversations whose updated_at the database finds earlier than ``value``."""
    table = connection.ops.quote_name(AgentSession._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT session_id FROM {table} WHERE updated_at < %s ORDER BY session_id", [value]
        )
        return [row[0] for row in cursor.fetchall()]


def test_the_clock_is_now_and_its_stamp_reads_back_as_it() -> None:
    before = timezone.now()
    read = clock.read_clock(connection)
    assert before <= read.now <= timezone.now()
    row = AgentSession.objects.create(session_id="c")
    stamp(row, read.stamp)
    row.refresh_from_db()
    assert row.updated_at == read.now  # to the microsecond


def test_the_threshold_is_exactly_one_resolution_earlier() -> None:
    # Whole seconds: the per-second texts of the SQLite clock rely on it.
    assert clock.UPDATED_AT_RESOLUTION.total_seconds() == 1
    read = clock.read_clock(connection)
    for name, age in (("a-2s", 2), ("b-1s", 1), ("c-0.5s", 0.5)):
        row = AgentSession.objects.create(session_id=name)
        stamp(row, connection.ops.adapt_datetimefield_value(read.now - timedelta(seconds=age)))
    # Exactly one resolution old is not older than the threshold: it equals it.
    assert older_than(read.threshold) == ["a-2s"]


@pytest.mark.parametrize(
    "moments",
    [
        # Whole seconds (no microseconds in the text) beside microseconds, a second crossed.
        ["12:00:00", "12:00:00.000001", "12:00:00.5", "12:00:00.999999", "12:00:01"],
        # The clock set back, and the same second again.
        ["12:00:01.25", "12:00:00", "12:00:01", "12:00:00.75"],
    ],
)
def test_stamps_sort_in_the_database_as_their_times(
    moments: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    written: dict[str, datetime] = {}
    for n, text in enumerate(moments):
        moment = datetime.fromisoformat(f"2027-03-04T{text}+00:00")
        # A chosen now (time, not the database, is what is replaced here).
        monkeypatch.setattr(timezone, "now", lambda moment=moment: moment)
        read = clock.read_clock(connection)
        row = AgentSession.objects.create(session_id=f"row-{n}")
        stamp(row, read.stamp)
        written[row.session_id] = moment
    monkeypatch.undo()
    in_database = AgentSession.objects.order_by("updated_at", "session_id")
    assert list(in_database.values_list("session_id", flat=True)) == sorted(
        written, key=lambda name: (written[name], name)
    )
    stored = dict(in_database.values_list("session_id", "updated_at"))
    assert stored == written
