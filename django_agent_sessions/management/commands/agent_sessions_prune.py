"""``manage.py agent_sessions_prune --older-than 30d [--dry-run] [--no-input]``.

Like ``flush``, it asks before deleting unless ``--no-input`` (for cron jobs).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from django_agent_sessions import retention
from django_agent_sessions.conf import values
from django_agent_sessions.management.options import add_database


class Command(BaseCommand):
    help = (
        "Delete conversations (and their items) with no activity for a while. The age "
        "defaults to AGENT_SESSIONS['RETENTION']."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than",
            metavar="AGE",
            help="e.g. 30d, 12h, 90min, 2w (s, min, h, d, w): delete conversations idle "
            "for longer than this. '1m' is refused: a minute or a month?",
        )
        parser.add_argument(
            "--noinput",
            "--no-input",
            action="store_false",
            dest="interactive",
            help="Do not ask for confirmation.",
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
        add_database(parser, to="prune")

    def handle(self, *args: Any, **options: Any) -> None:
        older_than = self._age(options["older_than"])
        cutoff = (timezone.now() - older_than).isoformat(timespec="seconds")
        if options["interactive"] and not options["dry_run"]:
            found = self._prune(older_than, dict(options, dry_run=True))
            if not found.conversations:
                self.stdout.write(f"No conversation without activity since {cutoff}.")
                return
            answer = input(
                f"This deletes {found.conversations} conversation(s) with {found.items} "
                f"item(s), with no activity since {cutoff}, for good.\n"
                "Type 'yes' to continue, or 'no' to cancel: "
            )
            if answer != "yes":
                self.stdout.write("Nothing deleted.")
                return
        removed = self._prune(older_than, options)
        verb = "Would delete" if options["dry_run"] else "Deleted"
        self.stdout.write(
            f"{verb} {removed.conversations} conversation(s) with {removed.items} item(s) "
            f"(no activity since {cutoff})."
        )

    def _prune(self, older_than: Any, options: dict[str, Any]) -> retention.Removed:
        try:
            return retention.prune(
                older_than,
                dry_run=options["dry_run"],
                batch_size=options["batch_size"],
                using=options["database"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from None

    def _age(self, value: str | None) -> Any:
        try:
            if value is not None:
                return values.parse_duration(value)
            default = retention.default_retention()
        except ValueError as error:
            raise CommandError(str(error)) from None
        if default is None:
            raise CommandError("Pass --older-than (e.g. 30d) or set AGENT_SESSIONS['RETENTION'].")
        return default
