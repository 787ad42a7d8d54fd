"""The example project's settings, pointed at the benchmark's agent and database.

``BENCH_DB``/``BENCH_DB_NAME`` choose the database as in ``benchmarks.settings``;
``BENCH_NO_SESSION=1`` (read by ``streaming_asgi``) runs the session-less baseline. The
URLconf is the example's with the floor view added (``benchmarks.floor_view``).

The database goes in as the example project's ``DATABASE_URL``, so its ``DATABASES`` is
built by the example's own code with the example's choices (persistent connections,
health checks, its SQLite options); ``CONN_MAX_AGE`` in the environment is the example's
own knob too, which the benchmark's "CONN_MAX_AGE=0" variants set.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote


def _database_url() -> str:
    name = os.environ.get("BENCH_DB_NAME", "bench-streaming.sqlite3")
    if os.environ.get("BENCH_DB", "sqlite") != "postgres":
        return f"sqlite:///{Path(name).resolve()}"
    user = quote(os.environ.get("PGUSER", "postgres"), safe="")
    password = quote(os.environ.get("PGPASSWORD", ""), safe="")
    host = quote(os.environ.get("PGHOST", "127.0.0.1"), safe="")
    port = os.environ.get("PGPORT", "5432")
    credentials = f"{user}:{password}" if password else user
    return f"postgres://{credentials}@{host}:{port}/{quote(name, safe='')}"


os.environ["DATABASE_URL"] = _database_url()

from example_project.settings import *  # noqa: E402, F403

DEBUG = False
SECRET_KEY = "benchmarks-only-not-secret"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}

# The load comes from a handful of users on loopback; the rate limit would measure itself.
AGENT_SESSIONS = {
    "AGENT": "benchmarks.streaming_app.build_agent",
    "RATE_LIMIT": None,
    "THREAD_SENSITIVE": os.environ.get("BENCH_THREAD_SENSITIVE", "1") == "1",
    "TITLES": None,  # the titles benchmark switches it (``benchmarks.titles_switch``)
}

# One worker, the in-memory layer, even where REDIS_URL is set (bin/services.sh sets it),
# unless the mode asks for production's layer: then the example's own Redis settings.
if os.environ.get("BENCH_CHANNEL_LAYER") != "redis":
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
ROOT_URLCONF = "benchmarks.floor_view"  # the example's URLs and the floor view
