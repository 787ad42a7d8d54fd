"""Settings for the test suite.

``AGENT_SESSIONS_TEST_DB`` chooses the database: ``sqlite`` (default; a file, because
Django's shared-cache in-memory test database fails under concurrent threads) or
``postgres`` (libpq's ``PGHOST``/``PGPORT``/``PGUSER``/``PGPASSWORD``, as set by
``bin/test``). ``REDIS_URL`` switches the channel layer to channels_redis.
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib.util import find_spec
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent
ARTIFACTS_DIR = Path(os.environ.get("TEST_ARTIFACTS_DIR", BASE_DIR.parent / "test-artifacts"))

SECRET_KEY = "tests-only-not-secret"
# Django's default hasher takes about half a second of CPU per password (1,000,000 rounds
# of PBKDF2), on every user a fixture makes and every login: nothing here tests its
# strength, so the tests hash fast (Django's testing docs, "Speeding up the tests").
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DEBUG = False
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "testserver"]
USE_TZ = True
TIME_ZONE = "UTC"

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_agent_sessions",
    # A faster flush for transactional tests' teardowns (tests/fast_flush).
    "tests.fast_flush",
    # Runs as tasks (tests/streaming/working): the database task backend's queue (absent
    # from the environment of tests/streaming/running/test_paused_newest_sdk.py).
    *(["django_tasks_db"] if find_spec("django_tasks_db") else []),
]

# Django's Tasks framework: Django 6's own, or the backport on 5.2 (same backends).
_TASKS_FRAMEWORK = "django_tasks" if __import__("django").VERSION < (6,) else "django.tasks"
TASKS: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": f"{_TASKS_FRAMEWORK}.backends.immediate.ImmediateBackend"},
    "database": {"BACKEND": "django_tasks_db.DatabaseBackend"},
}
# The Celery worker that runs runs (tests/task_workers.py); the test adds the same alias.
CELERY_RUNS = {
    "BACKEND": "django_agent_sessions.task_backends.celery.CeleryBackend",
    "OPTIONS": {"APP": "tests.task_backends.celery_runs.app"},
}
if os.environ.get("AGENT_SESSIONS_TEST_CELERY_RUNS"):
    TASKS["celery"] = CELERY_RUNS

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "tests.urls"
ASGI_APPLICATION = "tests.asgi.application"
STATIC_URL = "/static/"
# Where the servers a test starts find the files the test stored (its own directory).
MEDIA_ROOT = os.environ.get("AGENT_SESSIONS_TEST_MEDIA_ROOT", "")

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

TEST_DB = os.environ.get("AGENT_SESSIONS_TEST_DB", "sqlite")
# Worker processes started by the tests point straight at the running test database.
_DB_NAME = os.environ.get("AGENT_SESSIONS_DB_NAME")

if TEST_DB == "postgres":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": _DB_NAME or os.environ.get("PGDATABASE", "agent_sessions"),
            # One test database per run, so that several runs can share one server.
            "TEST": {"NAME": f"test_agent_sessions_{os.getpid()}"},
            "USER": os.environ.get("PGUSER", "postgres"),
            "PASSWORD": os.environ.get("PGPASSWORD", ""),
            "HOST": os.environ.get("PGHOST", "127.0.0.1"),
            "PORT": os.environ.get("PGPORT", "5432"),
        }
    }
elif TEST_DB == "sqlite":
    _sqlite_dir = Path(os.environ.get("TEST_SQLITE_DIR", tempfile.gettempdir()))
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": _DB_NAME or str(_sqlite_dir / "agent_sessions.sqlite3"),
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
            },
            "TEST": {"NAME": str(_sqlite_dir / f"test_{os.getpid()}.sqlite3")},
        }
    }
else:
    raise RuntimeError(f"AGENT_SESSIONS_TEST_DB must be 'sqlite' or 'postgres', not {TEST_DB!r}")

# Worker processes started by the tests share the prefix of the run that started them.
_CHANNEL_PREFIX = os.environ.get("AGENT_SESSIONS_CHANNEL_PREFIX", f"asgi{os.getpid()}:")

CHANNEL_LAYERS: dict[str, dict[str, Any]]
if os.environ.get("REDIS_URL"):
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # A prefix per run, so that several runs can share one Redis server.
            "CONFIG": {
                # redis-py >= 8 times out socket reads after 5 s by default, which kills
                # channels_redis's blocking receive (BZPOPMIN, 5 s) on idle sockets.
                "hosts": [{"address": os.environ["REDIS_URL"], "socket_timeout": None}],
                "prefix": _CHANNEL_PREFIX,
            },
        }
    }
    # Worker processes of the lost-messages tests: a layer that loses and delays events.
    if os.environ.get("AGENT_SESSIONS_TEST_LOSS"):
        CHANNEL_LAYERS["default"]["BACKEND"] = "tests.lossy_layer.LossyRedisChannelLayer"
        CHANNEL_LAYERS["default"]["CONFIG"].update(
            json.loads(os.environ["AGENT_SESSIONS_TEST_LOSS"])
        )
    # The rate limit is counted where every worker process sees it (check W013).
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
            "KEY_PREFIX": _CHANNEL_PREFIX,
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
# Worker processes whose HTTP streams and runs meet through PostgreSQL's LISTEN/NOTIFY
# (django_agent_sessions.layers): no Channels layer at all.
if os.environ.get("AGENT_SESSIONS_TEST_NO_CHANNEL_LAYERS"):
    CHANNEL_LAYERS = {}

AGENT_SESSIONS: dict[str, object] = {}
# Servers started by the tests (daphne) chat with the agent named here.
if os.environ.get("AGENT_SESSIONS_TEST_AGENT"):
    AGENT_SESSIONS = {"AGENT": os.environ["AGENT_SESSIONS_TEST_AGENT"], "RATE_LIMIT": None}
    # Their timers, when a test makes them short (JSON: {"FOLLOW_CHECK_SECONDS": 1}).
    AGENT_SESSIONS.update(json.loads(os.environ.get("AGENT_SESSIONS_TEST_SETTINGS", "{}")))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    # Worker processes started by the tests: loggers whose INFO lines a test reads.
    "loggers": {
        name: {"level": "INFO"}
        for name in os.environ.get("AGENT_SESSIONS_TEST_INFO_LOGGERS", "").split(",")
        if name
    },
}
