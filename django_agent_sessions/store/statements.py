"""The SQL of the app's raw statements, for each database vendor, built once.

This module writes the app's SQL text, but for two concerns that have a module of their
own: the search index (``search_statements``) and claiming runs (``claim_statements``).
The ORM has no single-statement form for what these do (``UPDATE ... RETURNING`` to
lock a conversation and learn its owner, ``DELETE ... RETURNING`` to pop exactly one
item, a read of the owner and the newest items in one query), and they run on every
session operation, so each is built once per vendor and table names. They need SQLite
>= 3.35 or PostgreSQL (a system check says so). Only table names quoted by the
connection, from model ``_meta``, are interpolated.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from django_agent_sessions.models import AgentSession, SessionItem

# The statements ``Statements.__init__`` builds whose ``%s`` placeholders follow ``qmark``
# (``lock`` and ``insert`` style their own as they build them).
_PLACEHOLDERS_STYLED = (
    "pop",
    "read_all",
    "read_newest",
    "read_newest_with_ids",
    "newest_ids",
    "oldest_before",
    "delete_from",
    "delete_through",
    "recount",
    "touch",
    "newest_items",
)


class Statements:
    """The SQL of every operation for one database vendor, built once and reused."""

    def __init__(self, vendor: str, sessions: str, items: str, qmark: bool = False) -> None:
        # ``qmark``: the SQL goes to sqlite3's own cursor (the SQLite shortcut in
        # ``store.transactions``), so it uses the driver's ``?`` placeholders; Django's
        # SQLite cursor rewrites ``%s`` to ``?`` with a regular expression on every
        # execute. None of this SQL holds a literal ``%``.
        self.qmark = qmark
        self._sessions, self._items = sessions, items
        self.pop = (
            f"DELETE FROM {items} WHERE id = (SELECT id FROM {items} WHERE session_id = %s "
            "ORDER BY id DESC LIMIT 1) RETURNING payload"
        )
        # Compaction (store.compaction.replace_suffix): the ids that must still be the
        # newest, the prefix a wrapper may prune, and the replacement's deletes.
        self.newest_ids = f"SELECT id FROM {items} WHERE session_id = %s ORDER BY id DESC LIMIT %s"
        # Taking back the last turn (store.items.take_back_last_turn).
        self.newest_items = (
            f"SELECT id, payload FROM {items} WHERE session_id = %s ORDER BY id DESC LIMIT %s"
        )
        self.oldest_before = (
            f"SELECT id, payload FROM {items} WHERE session_id = %s AND id < %s "
            "ORDER BY id ASC LIMIT %s"
        )
        self.delete_from = f"DELETE FROM {items} WHERE session_id = %s AND id >= %s"
        self.delete_through = f"DELETE FROM {items} WHERE session_id = %s AND id <= %s"
        self.touch = f"UPDATE {sessions} SET updated_at = %s WHERE id = %s"
        self.recount = (
            f"UPDATE {sessions} SET item_count = CASE WHEN item_count + %s > 0 "
            "THEN item_count + %s ELSE 0 END WHERE id = %s"
        )
        # LEFT JOIN: one row with a NULL payload still tells us the owner of an empty
        # conversation, so the ownership check costs no second query.
        if vendor == "postgresql":
            # LATERAL pins the plan to the (session, id) index. Measured with the plain
            # join: once one conversation held 1M items, PostgreSQL hash-joined the whole
            # items table for every read (200-600 ms, even for a 100-item conversation).
            self.limit_first = True
            self.read_all, self.read_newest, self.read_newest_with_ids = (
                f"SELECT s.owner_id, {columns} FROM {sessions} s LEFT JOIN LATERAL ("
                f"SELECT id, payload FROM {items} WHERE session_id = s.id "
                f"ORDER BY id {order}{window}) i ON TRUE WHERE s.session_id = %s "
                f"ORDER BY i.id {order}"
                for order, window, columns in (
                    ("ASC", "", "i.payload"),
                    ("DESC", " LIMIT %s", "i.payload"),
                    ("DESC", " LIMIT %s", "i.id, i.payload"),
                )
            )
        else:
            self.limit_first = False
            join = (
                f"SELECT s.owner_id, i.payload FROM {sessions} s "
                f"LEFT JOIN {items} i ON i.session_id = s.id WHERE s.session_id = %s "
            )
            self.read_all = join + "ORDER BY i.id ASC"
            self.read_newest = join + "ORDER BY i.id DESC LIMIT %s"
            self.read_newest_with_ids = (
                join.replace("i.payload", "i.id, i.payload", 1) + "ORDER BY i.id DESC LIMIT %s"
            )
        for name in _PLACEHOLDERS_STYLED:
            setattr(self, name, self._style(getattr(self, name)))

    def _style(self, sql: str) -> str:
        return sql.replace("%s", "?") if self.qmark else sql

    @functools.cache  # noqa: B019  # a handful of instances that live as long as the process
    def lock(self, count_change: str, with_title: bool) -> str:
        count = {
            "add": "item_count + %s",
            "pop": "CASE WHEN item_count > 0 THEN item_count - 1 ELSE 0 END",
            "reset": "0",
        }[count_change]
        title = ", title = CASE WHEN title = '' THEN %s ELSE title END" if with_title else ""
        # updated_at is not set here: two indexes hold it, and a statement that sets it
        # rewrites their entries even when the value is unchanged. The last column says
        # whether it must move (``touch``): it is older than the given time, or another
        # conversation of the same owner is more recent (so the owner's list, newest
        # first, is always exact).
        sessions = self._sessions
        return self._style(
            f"UPDATE {sessions} SET item_count = {count}{title} "
            "WHERE session_id = %s RETURNING id, owner_id, (updated_at < %s OR EXISTS ("
            f"SELECT 1 FROM {sessions} newer WHERE newer.owner_id = {sessions}.owner_id "
            f"AND newer.updated_at > {sessions}.updated_at))"
        )

    @functools.cache  # noqa: B019
    def insert(self, rows: int) -> str:
        values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s)"] * rows)
        return self._style(
            f"INSERT INTO {self._items} (session_id, payload, item_type, role, call_id, "
            f"preview, search_text, created_at) VALUES {values}"
        )


def statements(connection: BaseDatabaseWrapper, *, qmark: bool = False) -> Statements:
    """The statements for this connection's vendor (``qmark``: with ``?`` placeholders).

    Table names depend only on the vendor's quoting, so this is one dictionary lookup
    per operation once built.
    """
    key = (connection.vendor, qmark)
    built = _BY_VENDOR.get(key)
    if built is None:
        built = _BY_VENDOR[key] = Statements(
            connection.vendor,
            table(connection, AgentSession),
            table(connection, SessionItem),
            qmark,
        )
    return built


_BY_VENDOR: dict[tuple[str, bool], Statements] = {}


def table(connection: BaseDatabaseWrapper, model: type[Any]) -> str:
    return str(connection.ops.quote_name(model._meta.db_table))


def lock_many(connection: BaseDatabaseWrapper, count: int, *, stale_only: bool) -> str:
    """Write-lock ``count`` conversation rows by primary key (a no-op UPDATE)."""
    placeholders = ", ".join(["%s"] * count)
    sql = (
        f"UPDATE {table(connection, AgentSession)} SET item_count = item_count "
        f"WHERE id IN ({placeholders})"
    )
    if stale_only:
        sql += " AND updated_at < %s"
    return sql + " RETURNING id"


def delete_items(connection: BaseDatabaseWrapper, count: int) -> str:
    """Delete the items of ``count`` conversations, by conversation primary key."""
    placeholders = ", ".join(["%s"] * count)
    return f"DELETE FROM {table(connection, SessionItem)} WHERE session_id IN ({placeholders})"


def delete_attachments(connection: BaseDatabaseWrapper, count: int) -> str:
    """Delete the attachment rows of ``count`` conversations, returning their storage
    names (``DELETE ... RETURNING``: SQLite 3.35+ and PostgreSQL, one statement)."""
    from django_agent_sessions.files.models import Attachment

    placeholders = ", ".join(["%s"] * count)
    return (
        f"DELETE FROM {table(connection, Attachment)} WHERE session_id IN ({placeholders})"
        " RETURNING storage_name"
    )


def row_estimate(connection: BaseDatabaseWrapper) -> str | None:
    """The planner's estimate of a table's rows, where the vendor keeps one."""
    if connection.vendor != "postgresql":
        return None
    return "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass"


# PostgreSQL's notifications, the HTTP streams' channel layer (``notifications``).
NOTIFY_CHANNEL = "django_agent_sessions"
LISTEN = f"LISTEN {NOTIFY_CHANNEL}"
NOTIFY = "SELECT pg_notify(%s, %s)"


# Content search (``store.search``). PostgreSQL: a GIN index on the items' text search
# vector, in the configured language (a name ``store.search`` checked: only letters,
# digits and underscores). SQLite: an FTS5 table over the items' ``search_text``
# (external content), kept by triggers in the writing transaction, whatever the write, a
# batch at a time: the items above ``SEARCH_STATE``'s id are matched in the searching
# connection's temporary FTS5 table (the index's own SQL: ``search_statements``).
SEARCH_INDEX = "agent_item_search"
SEARCH_FTS = "agent_sessions_search"
SEARCH_STATE, SEARCH_PENDING = f"{SEARCH_FTS}_state", f"{SEARCH_FTS}_pending"
FTS5_AVAILABLE = "SELECT sqlite_compileoption_used('ENABLE_FTS5')"
FTS_EXISTS = f"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{SEARCH_STATE}'"


def search_items(
    connection: BaseDatabaseWrapper, language: str, *, fts: bool, terms: int, owned: bool = True
) -> str:
    """A user's newest items whose text holds every term; parameters: the owner (none
    when not ``owned``: anyone's, for staff), the query (``terms`` LIKE patterns without
    FTS5 on SQLite; with it, then ``INDEXED_TO``'s id), the limit."""
    sessions, items = table(connection, AgentSession), table(connection, SessionItem)
    join, match = _search_match(connection, language, fts=fts, terms=terms)
    owner, items, order = ("s.owner_id = %s AND " if owned else ""), f"{items} i", "i.id"
    if fts:  # FTS5 goes newest first and stops at the limit, up to the id after the query
        items, join, order = f"{SEARCH_FTS} f JOIN {items} ON i.id = f.rowid", "", "f.rowid"
        match += " AND f.rowid <= %s"  # (above it: search_statements.search_pending_items)
    return (
        f"SELECT i.id, s.session_id, s.title, i.search_text, s.id FROM {items} {join}"
        f"JOIN {sessions} s ON s.id = i.session_id WHERE {owner}{match} "
        f"ORDER BY {order} DESC LIMIT %s"
    )


def search_conversation_items(
    connection: BaseDatabaseWrapper, language: str, *, fts: bool, terms: int
) -> str:
    """One conversation's items whose text holds every term, in transcript order (the
    admin's find in a transcript); parameters: the conversation's primary key, the query
    as for ``search_items`` (twice with FTS5: the table, then ``search_pending``'s), the
    limit."""
    join, match = _search_match(connection, language, fts=fts, terms=terms)
    if fts:  # FTS5's matches read once: joined, SQLite ran the MATCH for every item
        pending = f"i.id IN (SELECT rowid FROM {SEARCH_PENDING} WHERE {SEARCH_PENDING} MATCH %s)"
        join, match = "", f"(i.id IN (SELECT rowid FROM {SEARCH_FTS} WHERE {match}) OR {pending})"
    return (
        f"SELECT i.id, i.role, i.item_type, i.search_text FROM {table(connection, SessionItem)} "
        f"i {join}WHERE i.session_id = %s AND {match} ORDER BY i.id ASC LIMIT %s"
    )


def _search_match(
    connection: BaseDatabaseWrapper, language: str, *, fts: bool, terms: int
) -> tuple[str, str]:
    """The join and the condition that keep the items ``i`` whose text holds every term."""
    if connection.vendor == "postgresql":
        vector = f"to_tsvector('{language}'::regconfig, i.search_text)"
        return "", f"i.search_text <> '' AND {vector} @@ to_tsquery('{language}'::regconfig, %s)"
    if fts:
        return f"JOIN {SEARCH_FTS} f ON f.rowid = i.id ", f"{SEARCH_FTS} MATCH %s"
    like = " AND ".join(["i.search_text LIKE %s ESCAPE '\\'"] * terms)
    return "", f"i.search_text <> '' AND {like}"
