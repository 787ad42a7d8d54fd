"""The Celery app of the Celery task backend's tests (``celery -A
tests.task_backends.celery_app worker``): broker and results in the test run's Redis,
under a key prefix of the test's own, so that test runs sharing one Redis server never
take each other's messages.

The worker gets ``REDIS_URL``, ``AGENT_SESSIONS_CELERY_PREFIX`` and
``DJANGO_SETTINGS_MODULE=tests.settings`` from the test; Celery's Django fixup then sets
Django up in the worker before it takes a task.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

# The queue a test sends to besides the default one (the worker consumes both).
OTHER_QUEUE = "agents"

app = Celery(
    "agent_sessions_tests",
    # The generic task, and the receivers of the framework's signals that the tests read.
    include=["django_agent_sessions.task_backends.celery", "tests.task_backends.celery_tasks"],
)


def configure(redis_url: str, prefix: str) -> None:
    keys = {"global_keyprefix": prefix}
    app.conf.update(
        broker_url=redis_url,
        result_backend=redis_url,
        broker_transport_options=keys,
        result_backend_transport_options=keys,
        broker_connection_retry_on_startup=True,
        # One message at a time: a test's next message waits in Redis, not in a worker.
        worker_prefetch_multiplier=1,
        result_expires=300,
    )


if os.environ.get("AGENT_SESSIONS_CELERY_PREFIX"):
    configure(os.environ["REDIS_URL"], os.environ["AGENT_SESSIONS_CELERY_PREFIX"])
