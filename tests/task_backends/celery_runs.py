"""The Celery app of the tests that run runs on Celery (``tests/streaming/working/
test_tasks.py``): our backend's generic task only, broker and results in the test run's
Redis under a key prefix of the test process (``AGENT_SESSIONS_CELERY_PREFIX`` in its
worker), apart from the Celery backend's own tests (``celery_app``), whose signal
receivers write to the file a task's first argument names.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

PREFIX = os.environ.get("AGENT_SESSIONS_CELERY_PREFIX") or f"agent-sessions-runs-{os.getpid()}:"

app = Celery("agent_sessions_runs", include=["django_agent_sessions.task_backends.celery"])
if os.environ.get("REDIS_URL"):
    keys = {"global_keyprefix": PREFIX}
    app.conf.update(
        broker_url=os.environ["REDIS_URL"],
        result_backend=os.environ["REDIS_URL"],
        broker_transport_options=keys,
        result_backend_transport_options=keys,
        broker_connection_retry_on_startup=True,
        worker_prefetch_multiplier=1,
        result_expires=300,
    )
