"""Per-user rate limit for starting runs, counted in Django's cache (fixed windows)."""

from __future__ import annotations

import logging
import math
import time

from django.core.cache import cache

from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.values import parse_rate as parse_rate

logger = logging.getLogger(__name__)
_ATTEMPTS = 3


async def allow_run(user_key: str) -> bool:
    """Count one run for ``user_key``; False once the limit of the window is reached."""
    return await retry_after(user_key) is None


async def retry_after(user_key: str) -> int | None:
    """Count one run for ``user_key``: None if it may start, else the seconds until the
    current window ends (when it may try again).

    A cache that fails three times in a row (e.g. Redis down) lets the run start and logs it:
    an outage of the cache must not stop every conversation.
    """
    rate = app_settings.RATE_LIMIT
    if rate is None:
        return None
    limit, period = parse_rate(rate)
    now = time.time()
    window = int(now // period)
    key = f"django_agent_sessions:runs:{user_key}:{period}:{window}"
    count = None
    for attempt in range(_ATTEMPTS):
        try:
            count = await _count(key, period)
            break
        except Exception:
            # After a Redis restart each pooled connection fails once.
            if attempt == _ATTEMPTS - 1:
                logger.exception("The rate limit's cache failed; the run is allowed.")
                return None
    if count is not None and count <= limit:
        return None
    return max(1, math.ceil((window + 1) * period - now))


async def _count(key: str, period: int) -> int:
    # add() is atomic on every cache backend: only the first request of a window sets 1.
    if await cache.aadd(key, 1, timeout=period + 1):
        return 1
    try:
        return int(await cache.aincr(key))
    except ValueError:  # expired between add() and incr()
        await cache.aset(key, 1, timeout=period + 1)
        return 1
