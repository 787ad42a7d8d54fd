"""Content search: the items' ``search_text`` and its index (``store.search``).

The index is PostgreSQL's GIN index or SQLite's FTS5 table with its triggers; existing
items get their text here. A later migration that rebuilds the items table on SQLite
drops the triggers: it must call ``search.install`` again (so does ``agent_sessions_reindex``).
"""

from typing import Any

from django.db import migrations, models


def install(apps: Any, schema_editor: Any) -> None:
    from django_agent_sessions.store import search

    search.reindex(schema_editor.connection.alias)


def uninstall(apps: Any, schema_editor: Any) -> None:
    from django_agent_sessions.store import search

    search.uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("django_agent_sessions", "0010_usage"),
    ]

    operations = [
        migrations.AddField(
            model_name="sessionitem",
            name="search_text",
            field=models.TextField(
                blank=True, db_default="", editable=False, verbose_name="search text"
            ),
        ),
        migrations.RunPython(install, uninstall),
    ]
