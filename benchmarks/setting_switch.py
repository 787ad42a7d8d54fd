"""A benchmark worker's switch for one of the app's settings, between rounds.

``POST /_bench/<name>/on/`` and ``/off/`` set one key of ``AGENT_SESSIONS`` in this
worker, as ``override_settings`` would (the app reads its settings on use and forgets
kept values on ``setting_changed``), so that one worker runs the same chats with a
feature and without it, taking turns: two workers of the same code differ by more than
what a feature costs (``benchmarks/README.md``, "Tracing overhead" and "Titles"). Only
benchmark workers on loopback serve it; it answers 409 while runs (or titles) of the
last round are in progress.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from benchmarks import settling


def switch_path(name: str, key: str, on: Any, off: Any) -> URLPattern:
    """``/_bench/<name>/<on|off>/``: ``AGENT_SESSIONS[key]`` set to ``on`` or ``off``."""

    @csrf_exempt
    @require_POST
    def switch(request: HttpRequest, state: str) -> HttpResponse:
        if state not in ("on", "off"):
            return HttpResponse(f"unknown state {state!r}: on or off", status=400)
        if (busy := settling.running()) is not None:
            return busy
        value = {**settings.AGENT_SESSIONS, key: on if state == "on" else off}
        settings.AGENT_SESSIONS = value
        setting_changed.send(
            sender=type(settings), setting="AGENT_SESSIONS", value=value, enter=True
        )
        settling.settle_now()  # every round from the same state (``settling``)
        return HttpResponse(state)

    return path(f"_bench/{name}/<str:state>/", switch)
