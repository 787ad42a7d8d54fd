"""``manage.py agent_sessions_export (SESSION_ID... | --owner USERNAME | --all) [--since WHEN]``.

``--owner`` answers a data request (everything stored for one user); ``--since`` keeps
the conversations active since a date (``2026-01-31``) or for a while (``30d``).
"""

from __future__ import annotations

import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import router

from django_agent_sessions import transfer
from django_agent_sessions.management.options import (
    add_database,
    add_format,
    add_output,
    add_since,
    parse_since,
    writing_to,
)
from django_agent_sessions.models import AgentSession


class Command(BaseCommand):
    help = "Export conversations with their items, in order, as JSON or JSONL."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("session_ids", nargs="*", metavar="SESSION_ID")
        parser.add_argument(
            "--owner", metavar="USERNAME", help="Every conversation owned by this user."
        )
        parser.add_argument("--all", action="store_true", help="Every conversation.")
        add_since(
            parser,
            help="Only conversations active since WHEN: a date or time in ISO 8601 "
            "(2026-01-31, 2026-01-31T12:00+00:00) or an age (30d, 12h; see agent_sessions_prune).",
        )
        add_output(parser)
        add_format(
            parser,
            help="json (one document) or jsonl (a conversation per line); "
            "default from the output file's extension, else json.",
        )
        add_database(parser, to="read")

    def handle(self, *args: Any, **options: Any) -> None:
        using = options["database"] or router.db_for_read(AgentSession)
        ids = list(dict.fromkeys(options["session_ids"]))
        chosen = [bool(ids), options["owner"] is not None, options["all"]]
        if sum(chosen) != 1:
            raise CommandError("Choose what to export: session ids, --owner USERNAME or --all.")
        conversations = AgentSession.objects.using(using).order_by("pk")
        if ids:
            conversations = conversations.filter(session_id__in=ids)
            found = set(conversations.values_list("session_id", flat=True))
            missing = sorted(set(ids) - found)
            if missing:
                raise CommandError(f"No conversation with session id {missing[0]!r}.")
        elif options["owner"] is not None:
            owner = self._owner(options["owner"], using)
            conversations = conversations.filter(owner=owner)
        if options["since"]:
            conversations = conversations.filter(updated_at__gte=parse_since(options["since"]))
        count = conversations.count()
        output = options["output"]
        fmt = options["format"] or (transfer.format_for(output) if output else "json")
        chunks = transfer.export_chunks(conversations, fmt)
        with writing_to(self.stdout, output) as write:
            for chunk in chunks:
                write(chunk)
        if output is not None:  # standard output holds the export itself
            print(f"Exported {count} conversation(s) to {output}.", file=sys.stderr)

    def _owner(self, username: str, using: str) -> Any:
        model = get_user_model()
        try:
            return model._default_manager.db_manager(using).get_by_natural_key(username)
        except ObjectDoesNotExist:
            raise CommandError(f"No user {username!r}.") from None
