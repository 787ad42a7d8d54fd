"""``manage.py agent_sessions_files [--delete] [--grace 1h]``: files nothing refers to.

Lists (and with ``--delete`` removes) the attachments no item references any more (left
by popped items, rewound turns, compaction, and uploads never sent) and the files under
the attachments' directory that no attachment names; both when older than ``--grace``
(``store.orphans``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from django_agent_sessions.conf import values
from django_agent_sessions.files import storage
from django_agent_sessions.store import orphans


class Command(BaseCommand):
    help = "List, or delete, stored files that no item or attachment refers to."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--delete", action="store_true", help="Remove what is found.")
        parser.add_argument(
            "--grace",
            default="1h",
            help="Leave files younger than this (default 1h; 0 for none): a write may still "
            "be in flight, an uploaded file may wait for its message.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        grace = timedelta(0)
        if options["grace"].rstrip("smhd") != "0":  # "0", "0s": no grace at all
            try:
                grace = values.parse_duration(options["grace"])
            except ValueError as error:
                raise CommandError(f"--grace: {error}") from None
        if options["delete"]:
            rows = orphans.remove_unreferenced(before=timezone.now() - grace)
        else:
            found = orphans.unreferenced(before=timezone.now() - grace)
            rows = [name for names in found.values() for name in names]
        stray = orphans.stray_files(grace)
        if options["delete"]:
            storage.delete(stray)
        verb = "Removed" if options["delete"] else "Found"
        for name in rows:
            self.stdout.write(f"unreferenced attachment: {name}")
        for name in stray:
            self.stdout.write(f"file without an attachment: {name}")
        self.stderr.write(f"{verb} {len(rows)} unreferenced attachments, {len(stray)} stray files.")
