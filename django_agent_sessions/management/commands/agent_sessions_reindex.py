"""``manage.py agent_sessions_reindex [--database ALIAS]``.

Recomputes every item's searchable text and recreates the search index (``store.search``):
after changing ``AGENT_SESSIONS["SEARCH"]`` (its language, or whether tools' outputs are
found), or when SQLite's FTS5 table or triggers were lost.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import DEFAULT_DB_ALIAS

from django_agent_sessions.store import search


class Command(BaseCommand):
    help = "Rebuild the content search index of conversations."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS)

    def handle(self, *args: Any, database: str = DEFAULT_DB_ALIAS, **options: Any) -> None:
        changed = search.reindex(database)
        self.stdout.write(f"Search index rebuilt; {changed} items' text changed.")
