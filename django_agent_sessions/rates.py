"""Rates written as settings: ``"30/m"`` is 30 per minute (per s, m, h or d)."""

from __future__ import annotations

import re

_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*([smhd])\s*$")


def parse_rate(rate: str) -> tuple[int, int]:
    """``"30/m"`` -> (30, 60). Raises ``ValueError`` naming the expected form."""
    match = _RATE.match(rate) if isinstance(rate, str) else None
    if match is None:
        raise ValueError(f"{rate!r} is not a rate like '30/m' (per s, m, h or d)")
    return int(match.group(1)), _PERIODS[match.group(2)]
