"""The example project's ASGI application, optionally without conversation memory.

``BENCH_NO_SESSION=1`` swaps the consumer's ``DjangoSession`` for a session that stores
nothing: the same stack minus the session's database work, as the baseline.
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.streaming_settings")

from example_project.asgi import application

if os.environ.get("BENCH_NO_SESSION") == "1":
    from benchmarks.streaming_app import NoMemorySession
    from django_agent_sessions import consumers

    consumers.DjangoSession = NoMemorySession  # type: ignore[attr-defined,assignment,misc]

__all__ = ["application"]
