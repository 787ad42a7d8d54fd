"""Migrated databases for the servers under test, migrated once per test process.

``manage.py migrate`` costs a process start and every migration (about 4 s on an idle
machine, twice that beside other tests), and a dozen modules each need a fresh database.
So each test process migrates one template per backend, the first time one is asked for,
and every database after it is a copy: a file copy on SQLite, ``CREATE DATABASE ...
TEMPLATE`` on PostgreSQL (the server copies the files; nothing replays the migrations),
and for a PostgreSQL server of a test's own (one it restarts or kills), a copy of a
stopped cluster's data directory holding the migrated database ``example`` (no initdb
either).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.services import PostgresServer

Migrate = Callable[[str], None]  # applies the migrations to a DATABASE_URL

_sqlite_template: Path | None = None
_postgres_template: str | None = None


def sqlite_copy(target: Path, migrate: Migrate) -> None:
    """A migrated SQLite database at ``target``."""
    global _sqlite_template
    if _sqlite_template is None:
        template = Path(tempfile.mkdtemp(prefix="example-template-")) / "template.sqlite3"
        migrate(f"sqlite:///{template}")
        atexit.register(shutil.rmtree, template.parent, ignore_errors=True)
        _sqlite_template = template
    shutil.copyfile(_sqlite_template, target)


def postgres_template(
    maintenance: Callable[[str], None], url_of: Callable[[str], str], migrate: Migrate
) -> str:
    """The name of this process's migrated PostgreSQL template database."""
    global _postgres_template
    if _postgres_template is None:
        name = f"example_template_{os.getpid()}"
        maintenance(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        maintenance(f'CREATE DATABASE "{name}"')
        migrate(url_of(name))
        atexit.register(maintenance, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        _postgres_template = name
    return _postgres_template


_cluster_template: Path | None = None


def start_postgres(server: PostgresServer, migrate: Migrate) -> str:
    """Start ``server`` (new, never started) holding a migrated database ``example``;
    its ``DATABASE_URL``."""
    global _cluster_template
    if _cluster_template is None:
        template = PostgresServer()
        template.start()
        migrate(template.create_database("example"))
        template.shut_down()
        atexit.register(shutil.rmtree, template.directory, ignore_errors=True)
        _cluster_template = template.data
    server.start_from(_cluster_template)
    return server.url("example")
