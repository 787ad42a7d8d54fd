"""Content search on SQLite: the FTS5 table made again with its new options, and triggers
that add the items a batch at a time (``store.search_statements``), rebuilt from the
items' text (``search.install``, as ``agent_sessions_reindex`` does). PostgreSQL's index
is unchanged. Going back leaves the new index, which the code of either keeps right.
"""

from typing import Any

from django.db import migrations


def install(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    from django_agent_sessions.store import search

    search.install(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("django_agent_sessions", "0011_search"),
    ]

    operations = [
        migrations.RunPython(install, migrations.RunPython.noop),
    ]
