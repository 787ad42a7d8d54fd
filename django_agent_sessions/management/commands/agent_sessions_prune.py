"""``manage.py agent_sessions_prune --older-than 30d [--dry-run] [--batch-size N]``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from django_agent_sessions import retention


class Command(BaseCommand):
    help = (
        "Delete conversations (and their items) with no activity for a while. The age "
        "defaults to AGENT_SESSIONS['RETENTION']."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than",
            metavar="AGE",
            help="e.g. 30d, 12h, 90m, 2w: delete conversations idle for longer than this.",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="Only count what would be deleted."
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=retention.DEFAULT_BATCH_SIZE,
            help="Conversations deleted per transaction (default %(default)s).",
        )
        parser.add_argument("--database", default=None, help="Database alias to prune.")

    def handle(self, *args: Any, **options: Any) -> None:
        older_than = self._age(options["older_than"])
        try:
            removed = retention.prune(
                older_than,
                dry_run=options["dry_run"],
                batch_size=options["batch_size"],
                using=options["database"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        cutoff = (timezone.now() - older_than).isoformat(timespec="seconds")
        verb = "Would delete" if options["dry_run"] else "Deleted"
        self.stdout.write(
            f"{verb} {removed.conversations} conversation(s) with {removed.items} item(s) "
            f"(no activity since {cutoff})."
        )

    def _age(self, value: str | None) -> Any:
        try:
            if value is not None:
                return retention.parse_duration(value)
            default = retention.default_retention()
        except ValueError as error:
            raise CommandError(str(error)) from None
        if default is None:
            raise CommandError("Pass --older-than (e.g. 30d) or set AGENT_SESSIONS['RETENTION'].")
        return default
