"""``manage.py agent_sessions_import FILE [--format json|jsonl]``.

Positions in error messages count from 1: line 1, conversation 1, item 1 are the first.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_agent_sessions import transfer
from django_agent_sessions.management.options import add_database, add_format


class Command(BaseCommand):
    help = (
        "Import conversations exported by agent_sessions_export or the admin. Every "
        "item is validated before anything is written; all or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The export file, or - for standard input.")
        add_format(
            parser,
            help="Default: jsonl for .jsonl/.ndjson files, else detected from the content "
            "(several JSON objects, one per line: jsonl; one document: json).",
        )
        add_database(parser, to="write")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["file"]
        try:
            text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {name}: {error}") from None
        fmt = options["format"]
        if fmt is None:
            by_name = transfer.format_for(name)
            fmt = by_name if by_name == "jsonl" else transfer.detect_format(text)
        try:
            conversations = transfer.parse(text, fmt)
            imported = transfer.import_conversations(conversations, using=options["database"])
        except transfer.TransferError as error:
            raise CommandError(f"{name}: {error}") from None
        self.stdout.write(
            f"Imported {imported.conversations} conversation(s) with {imported.items} item(s)."
        )
