"""The tracing benchmark's URLconf: the floor view's, and a switch for the app's telemetry.

``POST /_bench/telemetry/on/`` and ``/off/`` set ``AGENT_SESSIONS["TELEMETRY"]["ENABLED"]``
in this worker, as ``override_settings`` would (the app reads the setting on use and
forgets its kept value on ``setting_changed``), so that one worker runs the same chats with
the app's spans and metrics and without them, taking turns: two workers of the same code
differ by more than what tracing costs (``benchmarks/README.md``, "Tracing overhead").
Only the benchmark's worker on loopback serves it; nothing may be running when it is
called.
"""

from __future__ import annotations

import gc

from django.conf import settings
from django.core.signals import setting_changed
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from benchmarks.floor_view import urlpatterns as floor_urlpatterns
from django_agent_sessions.streaming import runs


@csrf_exempt
@require_POST
def switch(request: HttpRequest, state: str) -> HttpResponse:
    if state not in ("on", "off"):
        return HttpResponse(f"unknown state {state!r}: on or off", status=400)
    running = len(runs.local_runs())
    if running:
        return HttpResponse(f"{running} runs are running", status=409)
    value = {**settings.AGENT_SESSIONS, "TELEMETRY": {"ENABLED": state == "on"}}
    settings.AGENT_SESSIONS = value
    setting_changed.send(sender=type(settings), setting="AGENT_SESSIONS", value=value, enter=True)
    _settle()
    return HttpResponse(state)


def _settle() -> None:
    """Every round starts from the same state: the last round's garbage collected (a
    full collection of this worker's heap takes a few hundred milliseconds) and, on
    SQLite, its write-ahead log checkpointed (a checkpoint stalls the writes it lands
    in). Either, landing in a round, moved its time to first token by more than 5%."""
    gc.collect()
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")


urlpatterns = [path("_bench/telemetry/<str:state>/", switch), *floor_urlpatterns]
