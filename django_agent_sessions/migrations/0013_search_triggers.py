"""Content search on SQLite: the app adds its new items to the FTS5 table a batch at a time
(``store.search_batches``) where a trigger on every insert did, and a deleted item the
table holds waits in a queue that leaves the table a batch at a time
(``search_statements.search_triggers``). The FTS5 table itself is unchanged: nothing is
rebuilt. PostgreSQL's index is unchanged. Going back leaves the new triggers, which the
code of either keeps right (an older version's writes: a batch at its next write).
"""

from typing import Any

from django.db import migrations


def install(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return
    from django_agent_sessions.store import search_statements
    from django_agent_sessions.store.statements import FTS_EXISTS

    with connection.cursor() as cursor:
        cursor.execute(FTS_EXISTS)
        if cursor.fetchone() is None:  # no FTS5 table (an SQLite without FTS5)
            return
        for sql in search_statements.search_triggers(connection):
            cursor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("django_agent_sessions", "0012_search_batches"),
    ]

    operations = [
        migrations.RunPython(install, migrations.RunPython.noop),
    ]
