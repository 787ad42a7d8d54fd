"""System checks of the layer through which the chat's HTTP streams and runs meet.

- ``W015``: the SSE chat on PostgreSQL without psycopg 3: the streams fall back to a
  layer inside each process, so workers never see each other's runs;
- ``W013`` (as for websockets): the rate limit is counted in a per-process cache while
  the streams' layer (PostgreSQL's LISTEN/NOTIFY, or Channels') spans workers.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Warning

from django_agent_sessions import layers
from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.transports import chat_transport

_ID = "django_agent_sessions"
# Caches that live inside one process: each worker would count the rate limit alone.
_PER_PROCESS_CACHES = (
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
)


def check_stream_layer(**kwargs: Any) -> list[CheckMessage]:
    if not app_settings.is_dict() or not app_settings.AGENT or chat_transport() != "sse":
        return []
    kind = layers.stream_layer_kind()
    if kind == "local" and layers.on_postgresql():
        return [
            Warning(
                "The chat's streams use a channel layer inside each worker process: the "
                "database is PostgreSQL, but psycopg 3 is not installed for its "
                "LISTEN/NOTIFY layer.",
                hint="Several workers would not see each other's runs. Install psycopg 3 "
                '(pip install "django-agent-sessions[postgres]"), or set CHANNEL_LAYERS.',
                id=f"{_ID}.W015",
            )
        ]
    if kind == "postgres":
        return rate_limit_cache_warnings("PostgreSQL's LISTEN/NOTIFY")
    return []


def rate_limit_cache_warnings(layer: str) -> list[CheckMessage]:
    """W013: a rate limit counted in a per-process cache while ``layer`` spans
    processes (several workers): each worker allows the whole limit."""
    if app_settings.RATE_LIMIT is None:
        return []
    cache = (getattr(settings, "CACHES", None) or {}).get("default") or {}
    cache_backend = str(cache.get("BACKEND", _PER_PROCESS_CACHES[0]))
    if cache_backend not in _PER_PROCESS_CACHES:
        return []
    return [
        Warning(
            f"AGENT_SESSIONS['RATE_LIMIT'] is counted in the default cache ({cache_backend}), "
            f"which each worker process keeps for itself, while the channel layer ({layer}) "
            "spans processes.",
            hint="With N workers a user may start N times the limit. Use a cache shared "
            "by all workers (Redis, Memcached or the database) as CACHES['default'].",
            id=f"{_ID}.W013",
        )
    ]
