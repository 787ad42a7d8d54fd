"""The runs-as-tasks benchmark's settings: the streaming benchmark's, on production's
Redis channel layer, with runs executed where ``BENCH_RUNS`` says.

- ``inline``: ``AGENT_SESSIONS["RUNS"] = "inline"``, runs in the daphne worker;
- ``database``: ``RUNS = "tasks"`` on django-tasks-db's ``DatabaseBackend`` (its queue is a
  table of the benchmark's database; ``manage.py db_worker`` executes the runs);
- ``celery``: ``RUNS = "tasks"`` on the app's ``CeleryBackend``, the broker in Redis
  (``benchmarks.tasks_celery``, ``celery worker`` executes the runs).

Each mode's processes share a key prefix of their own in Redis (``CHANNEL_LAYER_PREFIX``,
read by the example's settings for the layer and the cache; ``BENCH_CELERY_PREFIX`` for
the broker), so that the three modes, alive side by side, never hear each other.
"""

from __future__ import annotations

import os

# Production's layer (channels_redis at REDIS_URL): a run a task executes reaches its
# tabs through it (check E064 refuses the in-memory one).
os.environ["BENCH_CHANNEL_LAYER"] = "redis"

from benchmarks.streaming_settings import *  # noqa: F403
from benchmarks.streaming_settings import AGENT_SESSIONS, INSTALLED_APPS

RUNS = os.environ.get("BENCH_RUNS", "inline")
_FRAMEWORK = "django_tasks" if __import__("django").VERSION < (6,) else "django.tasks"

INSTALLED_APPS = [*INSTALLED_APPS, "django_tasks_db"]
AGENT_SESSIONS = {**AGENT_SESSIONS, "RUNS": "inline" if RUNS == "inline" else "tasks"}
if os.environ.get("BENCH_CLAIM_AHEAD"):  # the benchmark's --claim-ahead
    AGENT_SESSIONS["RUNS_CLAIM_AHEAD"] = int(os.environ["BENCH_CLAIM_AHEAD"])


if RUNS == "celery":
    TASKS = {
        "default": {
            "BACKEND": "django_agent_sessions.task_backends.celery.CeleryBackend",
            "OPTIONS": {"APP": "benchmarks.tasks_celery.app"},
        }
    }
else:  # the database backend; unused by inline runs
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# As docs/tasks-celery.md configures a project.
CELERY_BROKER_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 3600,
    "global_keyprefix": os.environ.get("BENCH_CELERY_PREFIX", "bench-celery:"),
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
