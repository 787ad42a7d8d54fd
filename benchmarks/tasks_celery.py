"""The Celery app of the runs-as-tasks benchmark (``celery -A benchmarks.tasks_celery
worker``), set up as docs/tasks-celery.md tells a project: the app's generic task
included, the configuration from Django's settings (``CELERY_*`` of
``benchmarks.tasks_settings``: the broker in the benchmark's Redis under a prefix of its
own)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.tasks_settings")
os.environ.setdefault("BENCH_RUNS", "celery")

app = Celery("agent_sessions_bench", include=["django_agent_sessions.task_backends.celery"])
app.config_from_object("django.conf:settings", namespace="CELERY")
