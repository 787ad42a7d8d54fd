"""Django settings for benchmark worker processes, configured through the environment.

``BENCH_DB`` is ``sqlite`` (``BENCH_DB_NAME`` is the file) or ``postgres`` (``BENCH_DB_NAME``
is the database; libpq's ``PG*`` variables say where the server is). ``BENCH_APPS`` lists
the apps of the backend under test. Every Django-based backend gets the same database
options, so differences come from the code, not the configuration.
"""

from __future__ import annotations

import os

SECRET_KEY = "benchmarks-only-not-secret"
DEBUG = False
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    *[app for app in os.environ.get("BENCH_APPS", "").split(",") if app],
]

_NAME = os.environ.get("BENCH_DB_NAME", "bench.sqlite3")
DATABASES: dict[str, dict[str, object]]
if os.environ.get("BENCH_DB", "sqlite") == "postgres":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": _NAME,
            "USER": os.environ.get("PGUSER", "postgres"),
            "PASSWORD": os.environ.get("PGPASSWORD", ""),
            "HOST": os.environ.get("PGHOST", "127.0.0.1"),
            "PORT": os.environ.get("PGPORT", "5432"),
            # Long-lived, as in a Channels worker: one connection per thread.
            "CONN_MAX_AGE": None,
        }
    }
    if os.environ.get("BENCH_PG_SERVER_BINDING") == "1":
        # psycopg's own defaults: server-side binding, statements prepared after 5 uses.
        DATABASES["default"]["OPTIONS"] = {"server_side_binding": True, "prepare_threshold": 5}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": _NAME,
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
            },
        }
    }

# More databases of the same kind (``BENCH_DB_NAMES``, comma-separated), as aliases "db1",
# "db2", ...: a benchmark that compares databases in one process (benchmarks/search.py).
for _index, _other in enumerate(filter(None, os.environ.get("BENCH_DB_NAMES", "").split(","))):
    DATABASES[f"db{_index + 1}"] = {**DATABASES["default"], "NAME": _other}

AGENT_SESSIONS = {
    "THREAD_SENSITIVE": os.environ.get("BENCH_THREAD_SENSITIVE", "1") == "1",
}

# agentic-django refuses to start without an agent registry; the benchmark runs no agents.
AGENTIC_DJANGO_AGENT_REGISTRY = "benchmarks.settings.no_agents"


def no_agents(key: str) -> None:
    raise LookupError(f"the benchmark registers no agents ({key!r})")
