"""Per-user rate limit for starting runs, counted in Django's cache (fixed windows)."""

from __future__ import annotations

import re
import time

from django.core.cache import cache

from django_agent_sessions.conf import app_settings

_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*([smhd])\s*$")


def parse_rate(rate: str) -> tuple[int, int]:
    """``"30/m"`` -> (30, 60). Raises ``ValueError`` naming the expected form."""
    match = _RATE.match(rate) if isinstance(rate, str) else None
    if match is None:
        raise ValueError(f"{rate!r} is not a rate like '30/m' (per s, m, h or d)")
    return int(match.group(1)), _PERIODS[match.group(2)]


async def allow_run(user_key: str) -> bool:
    """Count one run for ``user_key``; False once the limit of the window is reached."""
    rate = app_settings.RATE_LIMIT
    if rate is None:
        return True
    limit, period = parse_rate(rate)
    window = int(time.time() // period)
    key = f"django_agent_sessions:runs:{user_key}:{period}:{window}"
    # add() is atomic on every cache backend: only the first request of a window sets 1.
    if await cache.aadd(key, 1, timeout=period + 1):
        return limit >= 1
    try:
        count = await cache.aincr(key)
    except ValueError:  # expired between add() and incr()
        await cache.aset(key, 1, timeout=period + 1)
        count = 1
    return bool(count <= limit)
