"""Helpers for the tests of the shortcuts DjangoSession takes: a store scope, encoded
items, a recorder of the statements a connection runs, and a marker for the tests of the
SQLite shortcut."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from django_agent_sessions import serialization
from django_agent_sessions.store import items as storage
from tests.conftest import user_message

SQLITE = connection.vendor == "sqlite"
only_sqlite = pytest.mark.skipif(
    not SQLITE, reason="the SQLite shortcut (PostgreSQL: test_shortcuts_general_path.py)"
)


def scope(session_id: str, owner_id: Any = None) -> storage.Scope:
    return storage.Scope(session_id, owner_id, "default")


def encoded(*texts: str) -> list[serialization.EncodedItem]:
    return serialization.encode_items(
        [user_message(t) for t in texts], max_bytes=None, max_depth=50
    )


class Statements:
    """An ``execute_wrapper`` that records every statement the connection runs."""

    def __init__(self) -> None:
        self.sql: list[str] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.sql.append(sql)
        return execute(sql, params, many, context)

    def verbs(self) -> list[str]:
        return [
            " ".join(s.split()[:2]) if s.startswith("BEGIN") else s.split()[0] for s in self.sql
        ]
