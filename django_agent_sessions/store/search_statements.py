"""The SQL of the content search index (``store.search``): its definition, SQLite's
batches, and PostgreSQL's search of a user's newest items before its index.

``statements.py`` holds the queries the search shares with the admin's; this module, the
index's own SQL (``statements.py`` is at the 300 lines every module keeps to). Only table
names quoted by the connection, from model ``_meta``, the language ``store.search``
checked (letters, digits, underscores) and the integer constants below are interpolated.

**SQLite**: an FTS5 table over the items' ``search_text`` (external content: the text is
read from the items table), kept by triggers in the writing transaction, whatever the
write, a batch at a time. FTS5 writes a segment of its index at the end of every
statement that changes its table, and merges segments as they pile up: with the item in
the index at once, ``add_items`` of 1 to 3 items cost 1.5 times as much as without the
index (``benchmarks/README.md``, "Search"); a batch at a time, 1.1 times. So a write of
the app's whose newest item is more than ``PENDING_ITEMS`` ids past the newest item the
table holds (``SEARCH_STATE``) adds every item up to it, in its transaction
(``search_batches``: not a trigger, which every insert would run), and the items in
between (the batch still to come, whoever wrote them) are read from the items table at
each search and matched in a temporary FTS5 table of the searching connection
(``search_pending``): a search finds every item as soon as its write commits. An item
inserted at or below the mark (an explicit id: ``loaddata`` into a database with newer
items) is found after ``agent_sessions_reindex``; updates of items the table holds
change it at once, of the others nothing. A deleted item the table holds
waits in a queue (``SEARCH_DELETED``) that leaves the table ``PENDING_ITEMS`` at a time:
searches join the items table, which no longer has it (an FTS5 'delete' per item made
``pop_item`` a fifth slower).

The table's options: ``columnsize=0`` (nothing ranks by bm25, whose per-item sizes cost
one more write per item) and ``prefix='1 2'``: every word of a query is a prefix, and
without these indexes FTS5 merges the lists of every word a one- or two-letter prefix
starts (0.1 to 0.5 s for a common one among 1M items); with them it reads one list,
newest first, and stops at the limit. Longer prefixes start few words; a third prefix
index cost 3 to 10% more per write and made no search faster. ``detail``
stays ``full``: with less, a query word that the tokenizer splits in two (``more_words``)
is a phrase, which FTS5 then refuses, for no write cost measurably lower. Its setting
``automerge`` is 16 (4 by default) once the table is built: FTS5 merges a level's
segments when that many pile up, so each item's entries are rewritten about half as
often, and a search reads a few more segments (set before the rebuild, it left so many
that searches at 1M items took a fifth longer).

**PostgreSQL**: the GIN index on the text search vector. A word in many items costs the
index the whole list of its items (or, for a prefix, of every word it starts: 0.16 to
1 s among 1M items), the user's or anyone's; the vector of a few items costs little (about
0.1 ms each). So a user's search first matches their newest ``RECENT_ITEMS`` items one
by one (``search_recent``), and asks the index (``search_older``) only for the older
ones, when the newest hold fewer matches than asked for.
"""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store.statements import (
    SEARCH_FTS,
    SEARCH_INDEX,
    SEARCH_PENDING,
    SEARCH_STATE,
    table,
)

#: At most this many items are written since the SQLite index's last batch.
PENDING_ITEMS = 128
#: A user's newest items that PostgreSQL's search matches one by one.
RECENT_ITEMS = 200
INDEXED_TO = f"SELECT indexed_to FROM {SEARCH_STATE}"
MARK = f"({INDEXED_TO})"
#: SQLite: deleted items the FTS5 table still holds (``search_triggers``).
SEARCH_DELETED = f"{SEARCH_FTS}_deleted"
#: Takes the queued deleted items out of the FTS5 table, in rowid order (one segment).
FLUSH_DELETED = (
    f"INSERT INTO {SEARCH_FTS}({SEARCH_FTS}, rowid, search_text) SELECT 'delete', item, "
    f"search_text FROM {SEARCH_DELETED} ORDER BY item"
)
#: The searching connection's temporary FTS5 table, emptied.
PENDING_TABLE = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{SEARCH_PENDING} USING fts5(search_text, "
    "content='', columnsize=0)",
    f"INSERT INTO temp.{SEARCH_PENDING}({SEARCH_PENDING}) VALUES ('delete-all')",
)


def search_install(connection: BaseDatabaseWrapper, language: str, *, fts: bool) -> list[str]:
    """The statements that (re)create the search index; ``fts``: SQLite has FTS5."""
    items, name = table(connection, SessionItem), SessionItem._meta.db_table
    if connection.vendor == "postgresql":
        return [
            f"DROP INDEX IF EXISTS {SEARCH_INDEX}",
            f"CREATE INDEX {SEARCH_INDEX} ON {items} USING gin "
            f"(to_tsvector('{language}'::regconfig, search_text)) WHERE search_text <> ''",
        ]
    if not fts:
        return []
    return [
        *search_uninstall(connection),
        f"CREATE VIRTUAL TABLE {SEARCH_FTS} USING fts5(search_text, content='{name}', "
        "content_rowid='id', columnsize=0, prefix='1 2')",
        f"CREATE TABLE {SEARCH_STATE} (indexed_to integer NOT NULL)",
        f"INSERT INTO {SEARCH_STATE} SELECT COALESCE(MAX(id), 0) FROM {items}",
        *search_triggers(connection),
        f"INSERT INTO {SEARCH_FTS}({SEARCH_FTS}) VALUES ('rebuild')",
        f"INSERT INTO {SEARCH_FTS}({SEARCH_FTS}, rank) VALUES ('automerge', 16)",  # see above
    ]


def search_triggers(connection: BaseDatabaseWrapper) -> list[str]:
    """SQLite: the triggers that keep the FTS5 table right, and the table of deleted
    items the table still holds (made again, empty: the FTS5 table holds none of them).

    No trigger on inserts: the app's writes add their batches (``search_batches``).
    Measured in the worker thread per operation (median, as the parity benchmark
    counts): a trigger on every insert cost ``add_items`` 3 to 8 µs even when its
    condition was false (SQLite runs a row trigger's program for each row), and the
    FTS5 'delete' of a popped item 15 to 70 µs; the queue of deleted items 5 µs."""
    items, fts, mark = table(connection, SessionItem), SEARCH_FTS, MARK
    delete = (
        f"INSERT INTO {fts}({fts}, rowid, search_text) SELECT 'delete', old.id, old.search_text"
    )
    queued = f"INSERT INTO {SEARCH_DELETED}(item, search_text) VALUES (old.id, old.search_text)"
    return [
        *_drop_triggers(),
        f"DROP TABLE IF EXISTS {SEARCH_DELETED}",
        f"CREATE TABLE {SEARCH_DELETED} (id integer PRIMARY KEY, item integer NOT NULL, "
        "search_text text NOT NULL)",
        # A deleted item waits in the queue: a search joins the items table, which no
        # longer holds it; the queue goes out of the FTS5 table in one statement.
        f"CREATE TRIGGER {fts}_delete AFTER DELETE ON {items} WHEN old.id <= {mark} AND "
        f"old.search_text <> '' BEGIN {queued}; END",
        f"CREATE TRIGGER {fts}_deleted AFTER INSERT ON {SEARCH_DELETED} WHEN new.id >= "
        f"{PENDING_ITEMS} BEGIN {FLUSH_DELETED}; DELETE FROM {SEARCH_DELETED}; END",
        # An update of an item the table holds changes it at once (a live row: the
        # queue does not hold it).
        f"CREATE TRIGGER {fts}_update AFTER UPDATE OF search_text ON {items} WHEN "
        f"old.id <= {mark} BEGIN {delete} WHERE old.search_text <> ''; INSERT INTO "
        f"{fts}(rowid, search_text) SELECT new.id, new.search_text WHERE "
        "new.search_text <> ''; END",
    ]


def _drop_triggers() -> list[str]:
    return [
        f"DROP TRIGGER IF EXISTS {SEARCH_FTS}_{when}"
        for when in ("insert", "delete", "update", "deleted")
    ]


def flush_pending(connection: BaseDatabaseWrapper) -> tuple[str, str]:
    """SQLite: add the items up to an id to the FTS5 table, then move the mark there;
    parameters: the id, then the id twice (``search_batches.after_insert``)."""
    return (
        f"INSERT INTO {SEARCH_FTS}(rowid, search_text) SELECT id, search_text FROM "
        f"{table(connection, SessionItem)} WHERE id > {MARK} AND id <= %s AND search_text <> ''",
        f"UPDATE {SEARCH_STATE} SET indexed_to = %s WHERE indexed_to < %s",
    )


def search_uninstall(connection: BaseDatabaseWrapper) -> list[str]:
    if connection.vendor == "postgresql":
        return [f"DROP INDEX IF EXISTS {SEARCH_INDEX}"]
    return [
        *_drop_triggers(),
        f"DROP TABLE IF EXISTS {SEARCH_FTS}",
        f"DROP TABLE IF EXISTS {SEARCH_STATE}",
        f"DROP TABLE IF EXISTS {SEARCH_DELETED}",
    ]


def search_pending(connection: BaseDatabaseWrapper, scope: str) -> str:
    """SQLite: put the items above the FTS5 table's newest (``INDEXED_TO``) in the
    temporary table (``PENDING_TABLE``); parameters: that id, then the owner (``scope``
    "owner") or the conversation's primary key ("conversation"); "all": none."""
    sessions = table(connection, AgentSession)
    where = {
        "owner": f"AND session_id IN (SELECT id FROM {sessions} WHERE owner_id = %s)",
        "conversation": "AND session_id = %s",
        "all": "",
    }[scope]
    return (
        f"INSERT INTO temp.{SEARCH_PENDING}(rowid, search_text) SELECT id, search_text FROM "
        f"{table(connection, SessionItem)} WHERE id > %s AND search_text <> '' {where}"
    )


def search_pending_items(connection: BaseDatabaseWrapper) -> str:
    """SQLite: as ``statements.search_items`` in the temporary table (``search_pending``);
    parameters: the query, the limit."""
    sessions, items = table(connection, AgentSession), table(connection, SessionItem)
    return (
        f"SELECT i.id, s.session_id, s.title, i.search_text, s.id FROM {SEARCH_PENDING} p "
        f"JOIN {items} i ON i.id = p.rowid JOIN {sessions} s ON s.id = i.session_id "
        f"WHERE {SEARCH_PENDING} MATCH %s ORDER BY p.rowid DESC LIMIT %s"
    )


def search_recent(connection: BaseDatabaseWrapper, language: str) -> str:
    """PostgreSQL: the id of the oldest of the user's newest ``RECENT_ITEMS`` items and
    their number, then (in each row, one row when none) those whose text holds every
    term, newest first; parameters: the owner, the query, the limit. Both steps are
    materialised: the planner may not trade the text of these items for the index."""
    sessions, items = table(connection, AgentSession), table(connection, SessionItem)
    vector = f"to_tsvector('{language}'::regconfig, t.search_text)"
    return (
        f"WITH recent AS MATERIALIZED (SELECT id FROM {items} WHERE session_id = ANY(ARRAY("
        f"SELECT id FROM {sessions} WHERE owner_id = %s)) ORDER BY id DESC LIMIT "
        f"{RECENT_ITEMS}), texts AS MATERIALIZED (SELECT i.id, i.session_id, i.search_text "
        f"FROM recent r JOIN {items} i ON i.id = r.id) SELECT b.low, b.n, h.* FROM (SELECT "
        "min(id) AS low, count(*) AS n FROM recent) b LEFT JOIN LATERAL (SELECT t.id, "
        f"s.session_id, s.title, t.search_text, s.id AS pk FROM texts t JOIN {sessions} s ON "
        f"s.id = t.session_id WHERE t.search_text <> '' AND {vector} @@ to_tsquery("
        f"'{language}'::regconfig, %s) ORDER BY t.id DESC LIMIT %s) h ON TRUE"
    )


def search_older(connection: BaseDatabaseWrapper, language: str) -> str:
    """PostgreSQL: as ``statements.search_items`` for the user's items older than an id,
    through the GIN index (the user's conversations read once, not one index scan per
    conversation; all their matches, then the newest); parameters: the owner, the id,
    the query, the limit."""
    sessions, items = table(connection, AgentSession), table(connection, SessionItem)
    vector = f"to_tsvector('{language}'::regconfig, i.search_text)"
    match = f"i.search_text <> '' AND {vector} @@ to_tsquery('{language}'::regconfig, %s)"
    return (
        f"WITH hits AS MATERIALIZED (SELECT i.id FROM {items} i WHERE i.session_id = ANY("
        f"ARRAY(SELECT id FROM {sessions} WHERE owner_id = %s)) AND i.id < %s AND {match}) "
        f"SELECT i.id, s.session_id, s.title, i.search_text, s.id FROM hits h JOIN {items} i "
        f"ON i.id = h.id JOIN {sessions} s ON s.id = i.session_id ORDER BY i.id DESC LIMIT %s"
    )
