"""``manage.py agent_sessions_feedback_export [--rating good|bad] [--tag TAG] [--since WHEN]``.

One JSON line per rated reply, for evaluations: the conversation before the reply in the
SDK's item format (``input``), the reply, the rating (1 or -1), comment and tags
(``store.feedback.records``).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from django_agent_sessions.management.options import add_output, add_since, parse_since, writing_to
from django_agent_sessions.models import Feedback
from django_agent_sessions.store import feedback

_RATINGS = {"good": 1, "bad": -1}


class Command(BaseCommand):
    help = "Export rated replies as JSONL for evaluations."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rating", choices=sorted(_RATINGS), help="Only these ratings.")
        parser.add_argument("--tag", help="Only ratings with this tag.")
        add_since(
            parser,
            help="Only ratings given or changed since WHEN: a date, an ISO 8601 time or an "
            "age (30d).",
        )
        add_output(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        rated = Feedback.objects.all()
        if options["rating"]:
            rated = rated.filter(rating=_RATINGS[options["rating"]])
        if options["tag"]:
            rated = rated.filter(tags__contains=f",{options['tag']},")
        if options["since"]:
            rated = rated.filter(updated_at__gte=parse_since(options["since"]))
        count = 0
        with writing_to(self.stdout, options["output"] or None) as write:
            for record in feedback.records(rated):
                write(json.dumps(record, ensure_ascii=False) + "\n")
                count += 1
        self.stderr.write(f"{count} rated replies exported.")
