"""``flush`` as a transactional test's teardown needs it: the rows gone, migrate's kept.

pytest-django ends each transactional test (``transaction=True``, ``live_server``, and
every test that uses ``transactional_db``) with Django's ``flush``, which empties every
table and then sends ``post_migrate`` so that contenttypes and auth make their rows
again. Measured on the suite's databases: 190 ms on PostgreSQL (``TRUNCATE`` makes new
files for each of about 30 tables and their indexes; then the content types and
permissions are read and inserted anew) and 40 ms on SQLite, for each of about 1,300
tests in each pass. This command leaves the same database in about 3 ms:

- every table but ``django_content_type`` and ``auth_permission`` is emptied with
  ``DELETE`` (what Django's own flush does on SQLite; on PostgreSQL the foreign keys
  Django makes are deferred to the commit, so the order does not matter);
- those two keep the rows migrate made, so ``post_migrate`` would add nothing: it is not
  sent. Their row count and newest id are compared with what they were after the last
  full flush; if a test added or removed any, Django's own flush runs instead. The
  content types' cache of this process is cleared, as ``post_migrate`` clears it: a
  test whose transaction was rolled back may have left a type in it that no row has.

Any other use (asking for confirmation, resetting sequences, ``available_apps``) is
Django's own flush. ``tests/test_fast_flush.py`` compares the two on both databases.
"""

from __future__ import annotations

from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.core.management.commands import flush
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

#: The tables whose rows ``post_migrate`` makes (contenttypes and auth).
KEPT = ("django_content_type", "auth_permission")
#: Per database: the kept tables' row counts and newest ids after the last full flush.
_migrated: dict[tuple[str, str], tuple[Any, ...]] = {}


class Command(flush.Command):
    def handle(self, **options: Any) -> None:
        connection = connections[options["database"]]
        key = (connection.alias, str(connection.settings_dict["NAME"]))
        teardown = _only_rows_to_remove(options)
        if teardown and _migrated.get(key) == _kept_rows(connection):
            _delete_rows(connection)
            ContentType.objects.clear_cache()
            return
        super().handle(**options)
        # Only a flush that sent post_migrate left what migrate makes.
        _migrated.pop(key, None)
        if teardown:
            _migrated[key] = _kept_rows(connection)


def _only_rows_to_remove(options: dict[str, Any]) -> bool:
    """What a transactional test's teardown asks for, and nothing else."""
    return not (
        options.get("interactive", True)
        or options.get("reset_sequences", True)
        or options.get("allow_cascade", False)
        or options.get("inhibit_post_migrate", False)
    )


def _kept_rows(connection: BaseDatabaseWrapper) -> tuple[Any, ...]:
    quote = connection.ops.quote_name
    counts = ", ".join(
        f"(SELECT COUNT(*) FROM {quote(name)}), (SELECT MAX(id) FROM {quote(name)})"
        for name in KEPT
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {counts}")
        return tuple(cursor.fetchone() or ())


def _delete_rows(connection: BaseDatabaseWrapper) -> None:
    quote = connection.ops.quote_name
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    connection.ops.execute_sql_flush(
        [f"DELETE FROM {quote(name)}" for name in sorted(tables) if name not in KEPT]
    )
