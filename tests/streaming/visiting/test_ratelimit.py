"""``ratelimit``: the per-user limit on starting runs, counted in Django's cache (Redis
when configured) in fixed windows; a cache that fails lets the run start."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from django_agent_sessions.streaming.visiting import ratelimit

DAY = 86400


def user_key() -> str:
    # Each test counts for a user of its own: the cache outlives a test.
    return f"user:{uuid.uuid4().hex}"


@pytest.mark.parametrize(
    ("rate", "parsed"),
    [("30/m", (30, 60)), (" 5 / s ", (5, 1)), ("100/h", (100, 3600)), ("1/d", (1, DAY))],
)
def test_a_rate_is_a_count_per_second_minute_hour_or_day(rate: str, parsed: Any) -> None:
    assert ratelimit.parse_rate(rate) == parsed


@pytest.mark.parametrize("rate", ["30", "30/w", "-1/m", "1.5/m", "m/30", "", None, 30])
def test_anything_else_is_refused_naming_the_expected_form(rate: Any) -> None:
    with pytest.raises(ValueError, match=r"like '30/m'"):
        ratelimit.parse_rate(rate)


async def test_no_rate_limits_nobody(settings: Any) -> None:
    settings.AGENT_SESSIONS = {"RATE_LIMIT": None}
    key = user_key()
    assert all([await ratelimit.allow_run(key) for _ in range(20)])


async def test_runs_past_the_limit_wait_for_the_end_of_the_window(settings: Any) -> None:
    settings.AGENT_SESSIONS = {"RATE_LIMIT": "2/d"}
    key, other = user_key(), user_key()
    assert await ratelimit.retry_after(key) is None
    assert await ratelimit.allow_run(key)
    retry = await ratelimit.retry_after(key)
    # The window is the UTC day: the third run may try again when the next day begins.
    until_tomorrow = DAY - time.time() % DAY
    assert retry is not None
    assert abs(retry - until_tomorrow) <= 2
    assert not await ratelimit.allow_run(key)  # refused runs count too
    assert await ratelimit.allow_run(other)  # counted per user


async def test_a_cache_that_fails_lets_the_run_start(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.AGENT_SESSIONS = {"RATE_LIMIT": "1/d"}
    # A Redis that refuses connections: nothing listens on port 1.
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    key = user_key()
    assert await ratelimit.retry_after(key) is None
    assert await ratelimit.retry_after(key) is None  # over the limit, were it counted
    assert "rate limit's cache failed" in caplog.text
