"""The example project's settings, pointed at the benchmark's agent and database.

``BENCH_DB``/``BENCH_DB_NAME`` choose the database as in ``benchmarks.settings``;
``BENCH_NO_SESSION=1`` (read by ``streaming_asgi``) runs the session-less baseline.
"""

from __future__ import annotations

import os

from example_project.settings import *  # noqa: F403
from example_project.settings import SQLITE_OPTIONS

DEBUG = False
SECRET_KEY = "benchmarks-only-not-secret"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}

_NAME = os.environ.get("BENCH_DB_NAME", "bench-streaming.sqlite3")
if os.environ.get("BENCH_DB", "sqlite") == "postgres":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": _NAME,
            "USER": os.environ.get("PGUSER", "postgres"),
            "PASSWORD": os.environ.get("PGPASSWORD", ""),
            "HOST": os.environ.get("PGHOST", "127.0.0.1"),
            "PORT": os.environ.get("PGPORT", "5432"),
        }
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": _NAME,
            "OPTIONS": SQLITE_OPTIONS,
        }
    }

# Variants for comparisons (bin/bench uses the example project's choices: 0 and True).
for _database in DATABASES.values():
    _database["CONN_MAX_AGE"] = None if os.environ.get("BENCH_CONN_MAX_AGE") == "none" else 0

# The load comes from a handful of users on loopback; the rate limit would measure itself.
AGENT_SESSIONS = {
    "AGENT": "benchmarks.streaming_app.build_agent",
    "RATE_LIMIT": None,
    "THREAD_SENSITIVE": os.environ.get("BENCH_THREAD_SENSITIVE", "1") == "1",
}
