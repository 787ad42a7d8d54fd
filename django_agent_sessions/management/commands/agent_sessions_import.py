"""``manage.py agent_sessions_import FILE [--format json|jsonl]``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_agent_sessions import transfer


class Command(BaseCommand):
    help = (
        "Import conversations exported by agent_sessions_export or the admin. Every "
        "item is validated before anything is written; all or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The export file, or - for standard input.")
        parser.add_argument(
            "--format",
            choices=transfer.FORMATS,
            help="Default from the file's extension (.jsonl/.ndjson: jsonl), else json.",
        )
        parser.add_argument("--database", default=None, help="Database alias to write.")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["file"]
        fmt = options["format"] or transfer.format_for(name)
        try:
            text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {name}: {error}") from None
        try:
            conversations = transfer.parse(text, fmt)
            imported = transfer.import_conversations(conversations, using=options["database"])
        except transfer.TransferError as error:
            raise CommandError(f"{name}: {error}") from None
        self.stdout.write(
            f"Imported {imported.conversations} conversation(s) with {imported.items} item(s)."
        )
