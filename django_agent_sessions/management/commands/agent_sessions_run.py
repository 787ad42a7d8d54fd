"""``manage.py agent_sessions_run TEXT [--session ID] [--agent PATH] [--owner USERNAME]
[--context JSON] [--no-wait]``: start a run from a shell, a cron job or a deploy hook.

The run is recorded and started like ``django_agent_sessions.start_run``'s: a task
worker executes it when runs are tasks, this process otherwise (the command then waits
for its end, since the run lives in it). Prints the run id, then, unless ``--no-wait``,
how it ended; exits non-zero when it was refused or did not complete.
"""

from __future__ import annotations

import json
import time
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import RunRefused, SessionOwnershipError
from django_agent_sessions.store import orders
from django_agent_sessions.streaming import start_run_sync

# How often a waiting command reads the run's record.
_POLL_SECONDS = 0.2


class Command(BaseCommand):
    help = "Start an agent run answering TEXT, with no tab open."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text", help="What the run answers.")
        parser.add_argument("--session", help="The conversation's id (default: a new one).")
        parser.add_argument("--agent", help="Dotted path to the agent (default: AGENT).")
        parser.add_argument("--owner", help="The username that owns the conversation.")
        parser.add_argument("--context", help="JSON given to the run's tools as ctx.context.")
        parser.add_argument(
            "--no-wait", action="store_true", help="Return once the run is started or queued."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        inline = app_settings.RUNS != "tasks"
        if inline and options["no_wait"]:
            raise CommandError("With RUNS = 'inline' the run lives in this command: it waits.")
        try:
            run_id = start_run_sync(
                options["session"],
                options["text"],
                agent=options["agent"],
                owner=_owner(options["owner"]),
                context=_context(options["context"]),
            )
        except RunRefused as refused:
            raise CommandError(f"Refused ({refused.code}): {refused}") from None
        except (SessionOwnershipError, TypeError, ValueError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(run_id)
        if options["no_wait"]:
            return
        status, code = _ended(run_id)
        self.stdout.write(f"{status}{f' ({code})' if code else ''}")
        if status != "completed":
            raise CommandError(f"The run ended {status}.")


def _owner(username: str | None) -> Any:
    if username is None:
        return None
    user_model = get_user_model()
    try:
        return user_model._default_manager.get_by_natural_key(username)
    except user_model.DoesNotExist:
        raise CommandError(f"No user {username!r}.") from None


def _context(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError(f"--context is not JSON: {error}") from None


def _ended(run_id: str) -> tuple[str, str]:
    while (ended := orders.outcome.sync(run_id)) is None:
        time.sleep(_POLL_SECONDS)
    return ended
