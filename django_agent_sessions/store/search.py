"""Content search: a user's conversations by their titles and what was said in them.

Each item's searchable text is its ``search_text`` column (``item_views.search_text``: user
and assistant messages, tools' outputs with ``AGENT_SESSIONS["SEARCH"]["TOOL_OUTPUTS"]``),
written with the item by every writer (``serialization.encode_item``). The index follows
the rows inside the database, so every write and delete keeps it right in its own
transaction, raw SQL included: PostgreSQL has a GIN index on the column's text search
vector (in ``AGENT_SESSIONS["SEARCH"]["LANGUAGE"]``, "simple" by default); SQLite an FTS5
table kept by triggers, or, where SQLite lacks FTS5, a scan of the user's items with
LIKE (slower, and matching inside words). ``agent_sessions_reindex`` rebuilds both.
SQLite's triggers add items a batch at a time (one FTS5 write per item doubled the cost
of ``add_items``); a search matches the items of the batch to come in a temporary FTS5
table of its own. PostgreSQL's search matches a user's newest items one by one before it
asks the index (a common word's list in the index is long). Why, and the FTS5 table's
options: ``search_statements``.

A query's words must all occur, each as the start of a word (anywhere in a title).
Hits carry their snippet as segments of plain text, the matches marked, never HTML.
Staff's searches in the admin are anyone's: ``conversations_with`` for the list of
conversations, ``in_conversation`` for one transcript.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from django.core.exceptions import ImproperlyConfigured
from django.db import connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from django_agent_sessions import serialization
from django_agent_sessions.conf import app_settings
from django_agent_sessions.item_views import search_text
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import search_batches, search_statements, statements

#: At most this many words of a query are searched for.
MAX_TERMS = 8
SNIPPET_BEFORE, SNIPPET_CHARS = 40, 160
_WORD = re.compile(r"\w+")
_LANGUAGE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Segment(NamedTuple):
    """A piece of a snippet: plain text, and whether it is a match to highlight."""

    text: str
    match: bool


class Hit(NamedTuple):
    """A conversation's title (``item_id`` None) or one of its items that matched."""

    session_id: str
    title: str
    item_id: int | None
    snippet: tuple[Segment, ...]


def search(owner_id: Any, query: str, limit: int = 20) -> list[Hit]:
    """The owner's matches, best first: titles (newest conversation first), then
    messages (newest first). Never another owner's; [] for an owner of None."""
    terms = terms_of(query)
    if owner_id is None or not terms or limit <= 0:
        return []
    using = router.db_for_read(SessionItem)
    titles = AgentSession.objects.using(using).filter(owner_id=owner_id)
    for term in terms:
        titles = titles.filter(title__icontains=term)
    hits = [
        Hit(session_id, title, None, snippet(title, terms))
        for session_id, title in titles.order_by("-updated_at").values_list("session_id", "title")[
            :limit
        ]
    ]
    found = _items(connections[using], [owner_id], terms, limit) if enabled() else []
    for item_id, session_id, title, text, _pk in found:
        hits.append(Hit(session_id, title, item_id, snippet(text, terms)))
    return hits[:limit]


def conversations_with(query: str, *, using: str, items: int = 1000) -> list[int]:
    """Staff's search (the admin's list): the primary keys of the conversations, anyone's,
    of the newest ``items`` messages that hold every word of ``query``."""
    terms = terms_of(query)
    if not terms or not enabled():
        return []
    rows = _items(connections[using], [], terms, items)
    return list(dict.fromkeys(row[4] for row in rows))


class ItemHit(NamedTuple):
    """One of a conversation's items that matched (``in_conversation``)."""

    item_id: int
    role: str
    item_type: str
    snippet: tuple[Segment, ...]


def in_conversation(session_pk: int, query: str, limit: int = 50, *, using: str) -> list[ItemHit]:
    """Staff's find in one transcript: the conversation's first ``limit`` items (by
    primary key ``session_pk``) that hold every word of ``query``, in transcript order,
    on the same index and with the same matching as ``search``."""
    terms = terms_of(query)
    if not terms or limit <= 0 or not enabled():
        return []
    connection = connections[using]
    fts = has_fts(connection)
    sql = statements.search_conversation_items(connection, language(), fts=fts, terms=len(terms))
    matched = _matched(connection, terms, fts)
    if fts:  # the FTS5 table's matches, and those of the items it does not hold yet
        matched *= 2
        _pending(connection, "conversation", [session_pk])
    with connection.cursor() as cursor:
        cursor.execute(sql, [session_pk, *matched, limit])
        rows = cursor.fetchall()
    return [ItemHit(pk, role, kind, snippet(text, terms)) for pk, role, kind, text in rows]


def enabled() -> bool:
    """Whether search is on (``AGENT_SESSIONS["SEARCH"]["ENABLED"]``, True by default).
    Off, items are written with no searchable text: titles are still found, messages
    not."""
    return serialization.search_mode() is not None


def terms_of(query: str) -> list[str]:
    """The words searched for: lower case, each once, at most ``MAX_TERMS``."""
    return list(dict.fromkeys(_WORD.findall(query.lower())))[:MAX_TERMS]


def _items(
    connection: BaseDatabaseWrapper, owner: list[Any], terms: list[str], limit: int
) -> list[Any]:
    fts = has_fts(connection)
    matched: list[Any] = _matched(connection, terms, fts)
    if connection.vendor == "postgresql" and owner:
        return _newest_first(connection, owner, matched[0], limit)
    sql = statements.search_items(
        connection, language(), fts=fts, terms=len(terms), owned=bool(owner)
    )
    found: list[Any] = []
    with connection.cursor() as cursor:
        if fts:  # the items the FTS5 table does not hold yet are the newest
            indexed_to = _pending(connection, "owner" if owner else "all", owner)
            cursor.execute(search_statements.search_pending_items(connection), [*matched, limit])
            found, matched = list(cursor.fetchall()), [*matched, indexed_to]
        if len(found) < limit:
            cursor.execute(sql, [*owner, *matched, limit - len(found)])
            found += cursor.fetchall()
    return found


def _pending(connection: BaseDatabaseWrapper, scope: str, values: list[Any]) -> int:
    """SQLite: put the items written since the FTS5 table's last batch (the owner's or
    the conversation's ``values``, or all: ``scope``) in the connection's temporary FTS5
    table; the id up to which the FTS5 table holds the items."""
    with connection.cursor() as cursor:
        cursor.execute(search_statements.INDEXED_TO)
        indexed_to = int(cursor.fetchone()[0])
        for sql in search_statements.PENDING_TABLE:
            cursor.execute(sql)
        cursor.execute(search_statements.search_pending(connection, scope), [indexed_to, *values])
    return indexed_to


def _newest_first(
    connection: BaseDatabaseWrapper, owner: list[Any], query: str, limit: int
) -> list[Any]:
    """PostgreSQL: the user's newest items matched one by one, then, if they hold fewer
    than ``limit`` matches, the older ones through the index."""
    with connection.cursor() as cursor:
        cursor.execute(
            search_statements.search_recent(connection, language()), [*owner, query, limit]
        )
        rows = cursor.fetchall()
        found = [row[2:] for row in rows if row[2] is not None]
        oldest, count = rows[0][0], rows[0][1]
        if len(found) < limit and count == search_statements.RECENT_ITEMS:
            sql = search_statements.search_older(connection, language())
            cursor.execute(sql, [*owner, oldest, query, limit - len(found)])
            found += cursor.fetchall()
    return found


def _matched(connection: BaseDatabaseWrapper, terms: list[str], fts: bool) -> list[str]:
    """The query's parameters: every term as a word prefix (PostgreSQL's tsquery, an
    FTS5 query) or, without FTS5, one LIKE pattern per term."""
    if connection.vendor == "postgresql":
        return [" & ".join(f"'{term}':*" for term in terms)]
    if fts:
        return [" ".join(f'"{term}"*' for term in terms)]
    return [f"%{_escape_like(term)}%" for term in terms]


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def snippet(text: str, terms: list[str]) -> tuple[Segment, ...]:
    """About ``SNIPPET_CHARS`` of ``text`` around its first match, the matches marked."""
    text = serialization.collapse_whitespace(text)
    alternatives = "|".join(re.escape(term) for term in sorted(terms, key=len, reverse=True))
    pattern = re.compile(f"(?<!\\w)(?:{alternatives})", re.IGNORECASE)
    first = pattern.search(text)
    if first is None:  # LIKE matched inside a word
        pattern = re.compile(alternatives, re.IGNORECASE)
        first = pattern.search(text)
    start = max(0, first.start() - SNIPPET_BEFORE) if first else 0
    end = start + SNIPPET_CHARS
    shown = ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
    segments: list[Segment] = []
    at = 0
    for found in pattern.finditer(shown):
        if found.start() > at:
            segments.append(Segment(shown[at : found.start()], False))
        segments.append(Segment(found.group(), True))
        at = found.end()
    if at < len(shown):
        segments.append(Segment(shown[at:], False))
    return tuple(segments)


def language() -> str:
    """``AGENT_SESSIONS["SEARCH"]["LANGUAGE"]``: a PostgreSQL text search configuration."""
    configured = (app_settings.SEARCH or {}).get("LANGUAGE") or "simple"
    if not isinstance(configured, str) or not _LANGUAGE.match(configured):
        raise ImproperlyConfigured(
            "AGENT_SESSIONS['SEARCH']['LANGUAGE'] must name a text search configuration"
        )
    return configured


def has_fts(connection: BaseDatabaseWrapper) -> bool:
    """Whether this SQLite database has the FTS5 search table (as ``install`` makes it)."""
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute(statements.FTS_EXISTS)
        return cursor.fetchone() is not None


def install(connection: BaseDatabaseWrapper) -> None:
    """(Re)create the index: PostgreSQL's in the configured language; SQLite's FTS5
    table and triggers where SQLite has FTS5, rebuilt from the items' text. In one
    transaction: SQLite's rebuild must hold exactly the items up to its mark."""
    fts = False
    if connection.vendor == "postgresql" and connection.in_atomic_block:
        connection.check_constraints()  # no CREATE INDEX while checks are pending
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(statements.FTS5_AVAILABLE)
            fts = bool(cursor.fetchone()[0])
        for sql in search_statements.search_install(connection, language(), fts=fts):
            cursor.execute(sql)
    search_batches.forget(connection)


def uninstall(connection: BaseDatabaseWrapper) -> None:
    with connection.cursor() as cursor:
        for sql in search_statements.search_uninstall(connection):
            cursor.execute(sql)
    search_batches.forget(connection)


def reindex(using: str, batch: int = 1000) -> int:
    """Recompute every item's search text (after a change of settings or an upgrade),
    then recreate the index; the number of items whose text changed."""
    mode = serialization.search_mode()  # None: search is off, every text is ""
    changed, after = 0, 0
    while True:
        rows = list(
            SessionItem.objects.using(using)
            .filter(id__gt=after)
            .order_by("id")
            .values_list("id", "payload", "search_text")[:batch]
        )
        if not rows:
            break
        stale = []
        for item_id, payload, stored in rows:
            decoded = serialization.decode_payloads([payload])
            text = search_text(decoded[0], mode) if decoded and mode is not None else ""
            text = serialization.column_text(text, serialization.SEARCH_CHARS)
            if text != stored:
                stale.append(SessionItem(id=item_id, search_text=text))
        with transaction.atomic(using=using):
            SessionItem.objects.using(using).bulk_update(stale, ["search_text"])
        changed += len(stale)
        after = rows[-1][0]
    with transaction.atomic(using=using):
        install(connections[using])
    return changed
