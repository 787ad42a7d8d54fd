"""``manage.py agent_sessions_schedule [--once] [--interval SECONDS]``.

Fires the scheduled runs that are due (``ScheduledRun``), each firing as an ordinary run.
By default it keeps going: it sleeps until the next firing it knows of, and at most
``--interval`` seconds (30), so that a schedule created or changed meanwhile is seen that
late at most (a schedule of minute precision needs an interval of 60 or less). ``--once``
fires what is due and exits (for cron or a timer). Run as many as you like, on as many
machines: each firing is claimed by one of them (docs/schedules.md). SIGTERM or SIGINT
ends the loop once the pass under way has finished.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections
from django.utils import timezone

from django_agent_sessions.scheduler.firing import Fired, fire_due
from django_agent_sessions.store import schedules

DEFAULT_INTERVAL = 30.0
MIN_SLEEP = 0.01


class Command(BaseCommand):
    help = "Fire the scheduled runs that are due, once or every --interval seconds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="Fire what is due now, then exit.")
        parser.add_argument(
            "--interval",
            type=float,
            default=DEFAULT_INTERVAL,
            metavar="SECONDS",
            help="The longest sleep between passes, in seconds: how late a new or changed "
            f"schedule may be seen (default {DEFAULT_INTERVAL:g}; at most 60 for schedules "
            "of minute precision).",
        )

    def handle(self, *args: Any, once: bool = False, interval: float, **options: Any) -> None:
        if interval <= 0:
            raise CommandError("--interval takes a positive number of seconds.")
        stop = threading.Event()
        if not once:
            self._stop_on_signals(stop)
        while not stop.is_set():
            # A long-lived process: a connection the server closed (a restart) or past
            # CONN_MAX_AGE is replaced before the pass, as a request's would be.
            close_old_connections()
            for fired in fire_due():
                self._report(fired)
            if once:
                return
            stop.wait(self._sleep(interval))

    @staticmethod
    def _sleep(interval: float) -> float:
        """Until the next firing (every scheduler wakes for it at once; the claim picks
        one), at most ``interval``; never quite zero, so that a firing another process is
        claiming right now is not asked after in a tight loop."""
        next_due = schedules.next_due_at()
        # As at a request's end: a connection past CONN_MAX_AGE (by default every one)
        # is not held through the sleep.
        close_old_connections()
        if next_due is None:
            return interval
        return min(interval, max(MIN_SLEEP, (next_due - timezone.now()).total_seconds()))

    def _report(self, fired: Fired) -> None:
        when = fired.scheduled_at.isoformat()
        if fired.run_id:
            self.stdout.write(f"Fired {fired.name!r} ({when}): run {fired.run_id}")
        else:
            self.stderr.write(f"Fired {fired.name!r} ({when}): no run: {fired.error}")

    @staticmethod
    def _stop_on_signals(stop: threading.Event) -> None:
        def handler(signum: int, frame: FrameType | None) -> None:
            stop.set()

        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, handler)
