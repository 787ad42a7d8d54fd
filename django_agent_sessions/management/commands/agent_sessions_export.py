"""``manage.py agent_sessions_export SESSION_ID... [--output FILE] [--format json|jsonl]``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import router

from django_agent_sessions import transfer
from django_agent_sessions.models import AgentSession


class Command(BaseCommand):
    help = "Export conversations with their items, in order, as JSON or JSONL."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("session_ids", nargs="+", metavar="SESSION_ID")
        parser.add_argument("--output", "-o", help="File to write (default: standard output).")
        parser.add_argument(
            "--format",
            choices=transfer.FORMATS,
            help="json (one document) or jsonl (a conversation per line); "
            "default from the output file's extension, else json.",
        )
        parser.add_argument("--database", default=None, help="Database alias to read.")

    def handle(self, *args: Any, **options: Any) -> None:
        using = options["database"] or router.db_for_read(AgentSession)
        ids = list(dict.fromkeys(options["session_ids"]))
        conversations = AgentSession.objects.using(using).filter(session_id__in=ids)
        missing = sorted(set(ids) - set(conversations.values_list("session_id", flat=True)))
        if missing:
            raise CommandError(f"No conversation with session id {missing[0]!r}.")
        output = options["output"]
        fmt = options["format"] or (transfer.format_for(output) if output else "json")
        chunks = transfer.export_chunks(conversations, fmt)
        if output is None:
            for chunk in chunks:
                self.stdout.write(chunk, ending="")
            return
        with Path(output).open("w", encoding="utf-8") as file:
            file.writelines(chunks)
        print(f"Exported {len(ids)} conversation(s) to {output}.", file=sys.stderr)
