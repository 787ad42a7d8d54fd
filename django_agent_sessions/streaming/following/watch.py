"""What one tab knows of the run it follows, and the timers that make it check.

The channel layer delivers at most once: an event, a decision or a run's end can be lost
on the way to a tab of another worker (or dropped from a full inbox). Every event of a
run carries its ``seq``, so a tab notices what it missed in two ways, and ``Watch``
times both:

- **a gap**: a later event came first; unfilled after ``GAP_TIMEOUT_SECONDS``, the tab
  recovers (asks the run where it stands, or reads the stored outcome);
- **silence**: nothing of a run it follows (started, not ended) for
  ``FOLLOW_CHECK_SECONDS``; the tab checks whether it missed anything. The timer arms
  itself again as it fires: a tab checks after every ``FOLLOW_CHECK_SECONDS`` of silence
  for as long as it follows the run, whatever came of the last check (a layer that
  delivers nothing more, a listener that did not come back, leaves every catch-up
  unanswered while the record says the run goes on: the tab keeps reading the record
  until it shows the end).

A timer never acts itself: it ``wake``s the tab's own inbox with an ``agent.check``, so
the tab's state is only ever changed by its own task, in arrival order. The inbox is
this process's, so a check works while the layer is down.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.utils import timezone

from django_agent_sessions.conf import app_settings
from django_agent_sessions.streaming.running.active_runs import TERMINAL_EVENTS

# A tab ends an expired waiting run this long after its expiry.
EXPIRY_MARGIN = 0.5
# Ends remembered per tab, so that a copy of an end (or a lost worker's, which has no
# seq) is shown once.
_ENDS_REMEMBERED = 20

Wake = Callable[[dict[str, Any]], None]


class Watch:
    """The run a tab follows (``live``), whether it waits for decisions, the runs whose
    end it showed, and its gap and silence timers."""

    def __init__(self, wake: Wake) -> None:
        self._wake = wake
        self.live: str | None = None
        self.waits = False
        self._ended: deque[str] = deque(maxlen=_ENDS_REMEMBERED)
        self._silence: asyncio.TimerHandle | None = None
        self._gaps: dict[str, asyncio.TimerHandle] = {}
        self._expiry: asyncio.TimerHandle | None = None

    def stop(self) -> None:
        for timer in [self._silence, self._expiry, *self._gaps.values()]:
            if timer is not None:
                timer.cancel()
        self._silence = None
        self._gaps.clear()

    def shown(self, event: dict[str, Any]) -> bool:
        """Note an event about to be shown; False for anything of a run whose end the
        tab showed (an end's copy, or an event delayed past it): drop it."""
        run_id, kind = event.get("run_id"), event.get("type")
        if not isinstance(run_id, str):
            return True
        if run_id in self._ended:
            return False
        if kind in TERMINAL_EVENTS:
            self.ended(run_id)
            return True
        waited = self.waits and self.live == run_id and kind == "approval.resolved"
        self.following(run_id, waits=kind == "approval.requested" or waited)
        return True

    def following(self, run_id: str | None, *, waits: bool = False) -> None:
        """The tab shows ``run_id`` in progress (None: no run); the silence timer restarts."""
        self.live, self.waits = run_id, waits
        self._restart_silence()

    def ended(self, run_id: str) -> None:
        self._ended.append(run_id)
        if self.live == run_id:
            self.live, self.waits = None, False
            self._restart_silence()

    def has_ended(self, run_id: str) -> bool:
        return run_id in self._ended

    def restart_silence(self) -> None:
        """A check found nothing missed: wait again."""
        self._restart_silence()

    def gap(self, run_id: str) -> None:
        """The run's sequence has a hole: check once it has been open for a while."""
        if run_id not in self._gaps:
            delay = float(app_settings.GAP_TIMEOUT_SECONDS)
            check = {"type": "agent.check", "run_id": run_id, "gap": True}
            self._gaps[run_id] = later(delay, self._wake, check)

    def gap_checked(self, run_id: str) -> None:
        self._gaps.pop(run_id, None)

    def expires(self, expires_at: Any) -> None:
        """A run waits for decisions until ``expires_at``: just after it, wake
        ``agent.expire`` (every tab showing the run does; the database lets one end it),
        so an open page sees the expiry without anybody acting."""
        if not isinstance(expires_at, str) or self._expiry is not None:
            return
        try:
            when = datetime.fromisoformat(expires_at)
        except ValueError:
            return
        delay = max(0.0, (when - timezone.now()).total_seconds()) + EXPIRY_MARGIN
        self._expiry = later(delay, self._wake, {"type": "agent.expire"})

    def expiry_over(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None

    def _restart_silence(self) -> None:
        if self._silence is not None:
            self._silence.cancel()
            self._silence = None
        if self.live is not None:
            delay = float(app_settings.FOLLOW_CHECK_SECONDS)
            check = {"type": "agent.check", "run_id": self.live}
            self._silence = later(delay, self._silent, check)

    def _silent(self, check: dict[str, Any]) -> None:
        self._silence = None
        self._restart_silence()  # the next check is due whatever this one finds (module doc)
        self._wake(check)


def later(delay: float, wake: Wake, message: dict[str, Any]) -> asyncio.TimerHandle:
    """``wake(message)`` after ``delay`` seconds, on the running loop."""
    return asyncio.get_running_loop().call_later(delay, wake, message)
