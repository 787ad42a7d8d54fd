"""SQLite's FTS5 index takes the app's new items a batch at a time, in the writing
transaction (``search_statements``: why batches, and how a search finds the items of
the batch to come).

The batch is added by the write that takes its newest item more than ``PENDING_ITEMS``
ids past the index's mark, not by a trigger: SQLite runs a row trigger's program for
every inserted row, condition included, and that cost ``add_items`` about 3 µs of its
median on every call to save a statement every 64 calls. Whether a batch is due is
known without a statement: each connection keeps the mark it last read (a hint). A
hint lower than the mark only asks the database sooner; a higher one (a rolled-back
batch, another process's rebuild) later, by at most its error, and items past the
mark are found by every search either way. Items written by anyone else (raw SQL, the
ORM) go in with the next batch of any writer of the app's.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from django_agent_sessions import serialization
from django_agent_sessions.store import search_statements
from django_agent_sessions.store.statements import FTS_EXISTS

_HINT = "_agent_sessions_search_mark"


def after_insert(
    connection: BaseDatabaseWrapper, cursor: Any, newest_id: int, *, qmark: bool
) -> None:
    """After the app inserted items up to ``newest_id`` (SQLite, in the transaction):
    add the pending items to the FTS5 table if a batch is due (``qmark``: the cursor
    is sqlite3's own, which takes ``?`` placeholders)."""
    hint: int | None = getattr(connection, _HINT, None)
    pending = search_statements.PENDING_ITEMS
    if hint is not None and newest_id - hint <= pending:
        return
    if serialization.search_mode() is None:  # search is off: the index is not kept
        return
    cursor.execute(FTS_EXISTS)
    if cursor.fetchone() is None:  # no FTS5 table (no FTS5 in this SQLite): ask again later
        setattr(connection, _HINT, newest_id)
        return
    cursor.execute(search_statements.INDEXED_TO)
    mark = int(cursor.fetchone()[0])
    if newest_id - mark > pending:
        add, move = search_statements.flush_pending(connection)
        if qmark:
            add, move = add.replace("%s", "?"), move.replace("%s", "?")
        cursor.execute(add, [newest_id])
        cursor.execute(move, [newest_id, newest_id])
        mark = max(mark, newest_id)
    setattr(connection, _HINT, mark)


def forget(connection: BaseDatabaseWrapper) -> None:
    """Drop the connection's hint (the index was made again)."""
    if hasattr(connection, _HINT):
        delattr(connection, _HINT)
