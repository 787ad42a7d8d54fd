"""A second database, empty and migrated, made by the test that needs it: an export
moved into another installation lands there (``--database``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection, connections
from django.db.utils import load_backend

ALIAS = "fresh"


@pytest.fixture
def fresh_database(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    """The alias of a new database of the test run's vendor, migrated; dropped after.

    The connection is this thread's alone and not in ``DATABASES`` (Django's test case
    allows only the databases it set up, and dynamically made connections), so a test
    reaches it from synchronous code (``async_to_sync`` runs its hops on this thread).
    """
    settings = connections.settings["default"]
    name = f"fresh_agent_sessions_{os.getpid()}"
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
            cursor.execute(f'CREATE DATABASE "{name}"')
    else:
        name = str(tmp_path / "fresh.sqlite3")
    backend = load_backend(settings["ENGINE"])
    fresh = backend.DatabaseWrapper({**settings, "NAME": name}, ALIAS)
    connections[ALIAS] = fresh
    try:
        call_command("migrate", database=ALIAS, verbosity=0, interactive=False)
        yield ALIAS
    finally:
        fresh.close()
        del connections[ALIAS]
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
