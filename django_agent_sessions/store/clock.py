"""An operation's time: as Python sees it, and as the database stores it.

``updated_at`` moves at most once per ``UPDATED_AT_RESOLUTION`` (see below), so every
mutation needs two database values of its time: the stamp it writes and the threshold it
compares ``updated_at`` with.
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from datetime import timezone as dt_timezone
from typing import Any, NamedTuple

from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

# How far ``updated_at`` may lag behind the last write. It orders the admin and the
# chat's list and decides retention, and both indexes that hold it are rewritten whenever
# it changes. Moving it at most once a second saves a burst of writes two index pages
# each (measured on SQLite: a write dirtied 6.6 pages, 4.6 this way; the SDK's
# SQLiteSession dirties 3.8), and keeps PostgreSQL's updates HOT. It still moves at once
# when another conversation of the same owner is more recent, so each user's list,
# newest first, is exact; only the order across owners may lag by up to this much.
UPDATED_AT_RESOLUTION = timedelta(seconds=1)  # whole seconds: see _utc_texts

UTC = dt_timezone.utc


class Clock(NamedTuple):
    """One operation's time."""

    now: datetime  # for the ORM (creating the conversation row)
    stamp: Any  # ``now`` as stored: created_at of new items, a moved updated_at
    threshold: Any  # ``now - UPDATED_AT_RESOLUTION`` as stored


def read_clock(connection: BaseDatabaseWrapper) -> Clock:
    """Now, with the values an operation writes and compares ``updated_at`` with.

    On SQLite the values are built as ``adapt_datetimefield_value`` builds them (the text
    of the naive time in the connection's time zone), converting once instead of twice:
    at one operation per hop, Django's two calls were a tenth of a pop's Python time.
    ``tests/test_shortcuts_encoding.py`` checks both against Django's own adaptation.
    """
    now = timezone.now()
    if connection.vendor == "sqlite":
        return Clock(now, *_sqlite_texts(now, connection.timezone))
    adapt = connection.ops.adapt_datetimefield_value
    return Clock(now, adapt(now), adapt(now - UPDATED_AT_RESOLUTION))


def _sqlite_texts(now: datetime, zone: tzinfo | None) -> tuple[str, str]:
    """``str`` of the naive local time, and of it minus the resolution."""
    if now.tzinfo is None:  # USE_TZ = False
        local = now
    elif zone is UTC and now.tzinfo is UTC:  # the default (timezone.now() is in UTC)
        return _utc_texts(now)
    else:
        local = timezone.make_naive(now, zone)
    return str(local), str(local - UPDATED_AT_RESOLUTION)


class _Second(NamedTuple):
    start: datetime  # aware, whole second
    text: str  # of ``start``, naive
    earlier: str  # of ``start - UPDATED_AT_RESOLUTION``, naive


_last_second: _Second | None = None


def _utc_texts(now: datetime) -> tuple[str, str]:
    """What ``_sqlite_texts`` gives for UTC, formatting each second once.

    Formatting two datetimes was a fifth of the Python around a SQLite write's
    statements; within a second only the microseconds change, and ``str(datetime)``
    writes them as a suffix of six digits (none when they are zero).
    """
    global _last_second
    second = _last_second
    start = now.replace(microsecond=0)
    if second is None or second.start != start:
        naive = start.replace(tzinfo=None)
        second = _last_second = _Second(start, str(naive), str(naive - UPDATED_AT_RESOLUTION))
    micro = now.microsecond
    if not micro:
        return second.text, second.earlier
    suffix = f".{micro:06d}"
    return second.text + suffix, second.earlier + suffix
