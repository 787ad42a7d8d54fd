"""Values written as settings: rates (``"30/m"`` is 30 per minute, per s, m, h or d) and
durations (``"30d"``, ``"90min"``), each parsed with an error that names the form expected."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*([smhd])\s*$")


def parse_rate(rate: str) -> tuple[int, int]:
    """``"30/m"`` -> (30, 60). Raises ``ValueError`` naming the expected form."""
    match = _RATE.match(rate) if isinstance(rate, str) else None
    if match is None:
        raise ValueError(f"{rate!r} is not a rate like '30/m' (per s, m, h or d)")
    return int(match.group(1)), _PERIODS[match.group(2)]


_DURATION = re.compile(r"^\s*(\d+)\s*([a-z]+)\s*$", re.IGNORECASE)
# No bare "m": is 1m a minute or a month? Minutes are "min"; months are not a fixed length.
_UNITS = {
    **dict.fromkeys(["s", "sec", "secs", "second", "seconds"], "seconds"),
    **dict.fromkeys(["min", "mins", "minute", "minutes"], "minutes"),
    **dict.fromkeys(["h", "hr", "hrs", "hour", "hours"], "hours"),
    **dict.fromkeys(["d", "day", "days"], "days"),
    **dict.fromkeys(["w", "week", "weeks"], "weeks"),
}
_AMBIGUOUS = {"m", "mo", "mon", "month", "months", "y", "yr", "year", "years"}


def parse_duration(value: Any) -> timedelta:
    """``"30d"``, ``"12h"``, ``"90min"``, ``"45s"``, ``"2w"`` (or the unit spelled out,
    ``"30 days"``), or a ``timedelta``; positive. ``"1m"`` is refused: a minute or a month?"""
    match = _DURATION.match(value) if isinstance(value, str) else None
    unit = match.group(2).lower() if match else ""
    if isinstance(value, timedelta):
        duration = value
    elif match and unit in _UNITS:
        duration = timedelta(**{_UNITS[unit]: int(match.group(1))})
    elif match and unit in _AMBIGUOUS:
        raise ValueError(
            f"Ambiguous duration {value!r}: write minutes as 'min' (e.g. '90min'); months "
            "and years have no fixed length, so give days (e.g. '30d', '365d')."
        )
    else:
        raise ValueError(
            f"Invalid duration {value!r}: use a whole number followed by s, min, h, d or w "
            "(seconds, minutes, hours, days, weeks), e.g. '30d' or '90min'."
        )
    if duration <= timedelta(0):
        raise ValueError(f"Invalid duration {value!r}: it must be longer than zero.")
    return duration
