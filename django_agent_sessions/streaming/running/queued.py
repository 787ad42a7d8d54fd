"""What a ``StreamedRun``'s queue holds besides the SDK's stream events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class End:  # the SDK's stream is over (``error``: how it failed)
    error: BaseException | None = None


@dataclass
class FlushDue:  # queued when pending text ``batch`` is due (stale once flushed)
    batch: int


@dataclass
class Shown:  # an item the run shows that is no SDK event (a message it took: ``show``)
    item: dict[str, Any]
