"""``manage.py agent_sessions_sweep [--every SECONDS]``.

Ends the runs whose worker died (their lease expired) and the approval waits past
``APPROVAL_TIMEOUT``, in conversations nobody has open, and removes the temporary chats
past ``TEMPORARY_TTL`` or left by their last page (``store.temporary``): every worker
with sockets does this by itself, so the command is for the rest (run it from cron or a
timer, or keep it running with ``--every``). Each run is ended once, through the same end
as everywhere (its calls get their outputs, the sockets of a channel layer shared with the
workers are told, ``run_finished`` fires), however many workers and commands sweep at
once.
"""

from __future__ import annotations

import asyncio
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = (
        "End runs whose worker died and approval waits past APPROVAL_TIMEOUT; remove "
        "temporary chats past TEMPORARY_TTL."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--every",
            type=float,
            metavar="SECONDS",
            help="Keep sweeping, this often, until interrupted.",
        )

    def handle(self, *args: Any, every: float | None = None, **options: Any) -> None:
        if every is not None and every <= 0:
            raise CommandError("--every takes a positive number of seconds.")
        async_to_sync(self._sweep)(every)

    async def _sweep(self, every: float | None) -> None:
        # Imported here: the sweep is the websocket wing's, which needs Channels.
        try:
            from channels.layers import get_channel_layer

            from django_agent_sessions.streaming import hosting_no_runs, sweep_once
        except ImportError as error:
            raise CommandError(f"The sweep needs Channels: {error}") from error
        from django_agent_sessions.store.temporary import asweep

        channel_layer = get_channel_layer()
        # A queued message (WHILE_RUNNING = "queue") whose reply's end is recorded here is
        # not run in this process, which exits: a worker sends it (docs/conversations.md).
        with hosting_no_runs():  # reset on the way out (a call_command's thread goes on)
            while True:
                lost, expired = await sweep_once(channel_layer)
                self.stdout.write(
                    f"Ended {lost} run(s) whose worker died and {expired} approval wait(s) "
                    "past their timeout."
                )
                removed = await asweep()
                if removed:
                    self.stdout.write(f"Removed {removed} temporary chat(s) due for removal.")
                if every is None:
                    return
                await asyncio.sleep(every)
