"""Settings for the example project, read from the environment.

With nothing set it runs as a development server on this machine: SQLite next to
``manage.py``, the in-memory channel layer, DEBUG on. Production mode (see
docs/example-project.md) sets:

- ``DATABASE_URL``: e.g. ``postgres://user:password@db.example.com:5432/chat``.
- ``REDIS_URL``: e.g. ``redis://127.0.0.1:6379/0``; switches to channels_redis, which every
  daphne worker of one site needs, so that all of them see every run.
- ``DEBUG`` (``0``/``1``), ``SECRET_KEY`` (required when DEBUG is off),
  ``ALLOWED_HOSTS`` (comma-separated).
- ``CHANNEL_LAYER_PREFIX``: channels_redis key prefix, for several sites on one Redis (also
  the prefix of the cache's keys).
- ``RATE_LIMIT`` (default ``30/m``), ``RUN_LEASE_SECONDS`` (default 60) and
  ``CONTINUE_RUNS_AFTER_DISCONNECT`` (default on): the ``AGENT_SESSIONS`` settings of the
  same names.
- ``RUNS``: ``tasks`` executes runs in task workers (``manage.py db_worker``, the database
  task backend, which the ``tasks-db`` extra installs) instead of the web workers.
- ``OPENAI_API_KEY``, ``AGENT_MODEL``, ``OPENAI_BASE_URL``: a real model instead of the
  offline demo (read by ``example_project/agent.py``); ``DEMO_MODEL_DELAY``: seconds
  between the demo model's words; ``DEMO_TITLES`` (default on): titles after the first
  exchange, by the demo offline, by the agent's model with a key (``0``: none);
  ``TEMPORARY_GRACE_SECONDS`` (default 30): how long a closed temporary chat waits for a
  reload before it is removed; ``WHILE_RUNNING`` (default ``busy``; ``interrupt``): what a
  message sent during a reply does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be 1/0, true/false, yes/no or on/off, not {value!r}")


def _int_env(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(
            f"{name} must be a whole number of seconds, not {value!r}"
        ) from None
    if number < 0:
        raise ImproperlyConfigured(f"{name} must not be negative, not {value!r}")
    return number


DEBUG = _flag("DEBUG", True)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "example-project-development-key-not-for-production"  # noqa: S105

ALLOWED_HOSTS = [
    host.strip()
    for host in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")
    if host.strip()
]

USE_TZ = True
TIME_ZONE = "UTC"
USE_I18N = True

INSTALLED_APPS = [
    # First, so that `manage.py runserver` is daphne's ASGI server (websockets included).
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    # Before the app, so that its chat.html (which extends the packaged one) is found first.
    "example_project.chat",
    "django_agent_sessions",
]

# RUNS=tasks: runs execute in task workers (`manage.py db_worker`), queued in the database.
_RUNS = os.environ.get("RUNS") or "inline"
if _RUNS == "tasks":
    INSTALLED_APPS.append("django_tasks_db")
    TASKS: dict[str, dict[str, Any]] = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "example_project.chat.security.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "example_project.urls"
ASGI_APPLICATION = "example_project.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# SQLite only waits for a lock (instead of failing at once with "database is locked")
# when each transaction takes the write lock up front; WAL lets readers run meanwhile.
SQLITE_OPTIONS = {
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
}


def _database() -> dict[str, Any]:
    url = os.environ.get("DATABASE_URL")
    if not url:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": BASE_DIR / "db.sqlite3",
            "OPTIONS": SQLITE_OPTIONS,
        }
    # Persistent connections: with CONN_MAX_AGE=0 every database call of a websocket
    # worker opened a new PostgreSQL connection, which made the time to first token six
    # times longer in the streaming benchmark (docs/benchmarks.md). Health checks replace
    # a connection broken by a database restart instead of failing every later call.
    config: dict[str, Any] = dict(
        dj_database_url.parse(
            url, conn_max_age=_int_env("CONN_MAX_AGE", 600), conn_health_checks=True
        )
    )
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["OPTIONS"] = {**SQLITE_OPTIONS, **config.get("OPTIONS", {})}
    return config


DATABASES = {"default": _database()}


def _channel_layer() -> dict[str, Any]:
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        # One process only: fine for `bin/run`, wrong for several workers.
        return {"BACKEND": "channels.layers.InMemoryChannelLayer"}
    if os.environ.get("CHANNEL_LAYER") == "pubsub":
        # Redis's pub/sub (docs/tasks.md, "The channel layer"): one round trip per message
        # sent, none per message received; what it misses while Redis restarts, the tabs
        # recover from the runs' records.
        return {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {
                "hosts": [{"address": redis_url, "socket_timeout": None}],
                "prefix": os.environ.get("CHANNEL_LAYER_PREFIX", "asgi"),
            },
        }
    return {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            # redis-py >= 8 times socket reads out after 5 s; channels_redis waits longer
            # than that for messages, so idle sockets would be dropped without this.
            # redis-py >= 8 also caps a pool at 100 connections and then fails at once
            # ("Too many connections"): 200 runs streaming on one worker need more.
            "hosts": [{"address": redis_url, "socket_timeout": None, "max_connections": 1000}],
            # Every socket of one worker process receives through one Redis key (its
            # process-local channels share it), whose capacity is 100 messages by default.
            # With runs as tasks, every event of every run the worker's tabs follow comes
            # through it: 50 runs streaming outran 100 at once, group_send dropped events
            # silently and replies to catch-ups raised ChannelFull; the tabs never saw the
            # runs end (benchmarks/tasks.py). Room for bursts; a backlog is latency, a
            # drop is a lost event.
            "capacity": 10_000,
            "prefix": os.environ.get("CHANNEL_LAYER_PREFIX", "asgi"),
        },
    }


# CHANNEL_LAYER=none: no channel layer at all (the chat then streams over HTTP, and
# several workers meet through PostgreSQL's LISTEN/NOTIFY).
CHANNEL_LAYERS = {} if os.environ.get("CHANNEL_LAYER") == "none" else {"default": _channel_layer()}


def _caches() -> dict[str, Any]:
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # Shared by every worker: the rate limit counts a user's runs wherever they start
    # (a per-process cache would let each worker allow the whole limit).
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": os.environ.get("CHANNEL_LAYER_PREFIX", "asgi"),
        }
    }


CACHES = _caches()


def _titles() -> Any:
    if not _flag("DEMO_TITLES", True):
        return None
    return "agent" if os.environ.get("OPENAI_API_KEY") else {"FUNCTION": _DEMO_TITLES}


_DEMO_TITLES = "example_project.demo_titles.title"

AGENT_SESSIONS = {
    "AGENT": "example_project.agent.build_agent",
    # A reload (or a phone switching networks) drops the socket for a moment; the run
    # keeps going and the page picks it up again from the history frame's active_run.
    "CONTINUE_RUNS_AFTER_DISCONNECT": _flag("CONTINUE_RUNS_AFTER_DISCONNECT", True),
    "RATE_LIMIT": os.environ.get("RATE_LIMIT") or "30/m",
    "RUN_LEASE_SECONDS": _int_env("RUN_LEASE_SECONDS", 60) or 60,
    # "inline" (in the web worker that took the message) or "tasks" (above).
    "RUNS": _RUNS,
    # "websocket", "sse", or unset: the websocket here (Channels is configured).
    "TRANSPORT": os.environ.get("CHAT_TRANSPORT") or None,
    # How long one event stream lasts before the browser reconnects (SSE only).
    "SSE_STREAM_SECONDS": _int_env("SSE_STREAM_SECONDS", 300) or 300,
    # What people may attach: the library's limits, files of up to UPLOAD_MAX_MB each.
    "ATTACHMENTS": {"MAX_UPLOAD_BYTES": (_int_env("UPLOAD_MAX_MB", 25) or 25) * 1024 * 1024},
    # Titles after the first exchange (docs/conversations.md): the agent's model with an
    # API key; offline, the demo's own (DEMO_TITLES, on by default).
    "TITLES": _titles(),
    # A temporary chat whose last tab closed is removed this many seconds later.
    "TEMPORARY_GRACE_SECONDS": _int_env("TEMPORARY_GRACE_SECONDS", 30),
    # Share links (docs/conversations.md): "off", "login" or "public".
    "SHARE_LINKS": os.environ.get("SHARE_LINKS") or "off",
    # A message sent during a reply: "busy" (refused) or "interrupt" (stops it, then sent).
    "WHILE_RUNNING": os.environ.get("WHILE_RUNNING") or "busy",
    # Token budgets (docs/operations.md): TOKENS_PER_DAY per person, shown under the box.
    "QUOTAS": (
        {"TOKENS_PER_DAY": _int_env("TOKENS_PER_DAY", 0), "SHOW_REMAINING": True}
        if _int_env("TOKENS_PER_DAY", 0)
        else None
    ),
}

# The files people give the chat (docs/attachments.md). Private: no MEDIA_URL serves them;
# the chat's owner-only view and the admin do.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT") or BASE_DIR / "media")

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# daphne does not serve static files; asgi.py does it for this small project unless a
# front proxy serves `collectstatic` output from STATIC_ROOT (SERVE_STATIC=0).
SERVE_STATIC = _flag("SERVE_STATIC", True)

LOGIN_URL = "login"

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = _flag("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
