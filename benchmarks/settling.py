"""A benchmark worker's settle endpoint: every measured round starts from the same state.

``POST /_bench/settle/`` collects the worker's garbage (a full collection of its heap
takes a few hundred milliseconds; landing in a round it moved the round's time to first
token by more than 5%) and, on SQLite, checkpoints the write-ahead log (a checkpoint
stalls the writes it lands in). It answers 409 while runs of the last round are still
recording their ends (a run records its end after its tabs learn it) or titles are being
written; ``daphne_worker.when_idle`` posts until the worker takes it. Only benchmark
workers on loopback serve it (``floor_view``'s URLconf, which the switches'
(``setting_switch``) include).
"""

from __future__ import annotations

import gc
from typing import Any

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from django_agent_sessions.streaming.running import active_runs, titling


def running() -> HttpResponse | None:
    """409 while this worker runs runs or writes titles (``AGENT_SESSIONS["TITLES"]``);
    None when it is idle."""
    count = len(active_runs.local_runs()) + len(titling.writing)
    return HttpResponse(f"{count} runs or titles are running", status=409) if count else None


def settle_now() -> None:
    gc.collect()
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@csrf_exempt
@require_POST
def settle(request: HttpRequest) -> HttpResponse:
    if (busy := running()) is not None:
        return busy
    settle_now()
    return HttpResponse("settled")


urlpatterns: list[Any] = [path("_bench/settle/", settle)]
