"""``manage.py agent_sessions_schedule [--once] [--interval SECONDS]``.

Fires the scheduled runs that are due (``ScheduledRun``), each firing as an ordinary run.
By default it keeps going, waking every ``--interval`` seconds (30): a schedule fires up
to that late, so a schedule of minute precision needs an interval of 60 or less. ``--once``
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

from django_agent_sessions.schedules.firing import Fired, fire_due

DEFAULT_INTERVAL = 30.0


class Command(BaseCommand):
    help = "Fire the scheduled runs that are due, once or every --interval seconds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="Fire what is due now, then exit.")
        parser.add_argument(
            "--interval",
            type=float,
            default=DEFAULT_INTERVAL,
            metavar="SECONDS",
            help=f"How often to wake and fire what is due (default {DEFAULT_INTERVAL:g}); "
            "at most 60 for schedules of minute precision.",
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
            close_old_connections()
            if once:
                return
            stop.wait(interval)

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
