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

from django.conf import settings
from django.core.signals import setting_changed
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from benchmarks import settling
from benchmarks.floor_view import urlpatterns as floor_urlpatterns


@csrf_exempt
@require_POST
def switch(request: HttpRequest, state: str) -> HttpResponse:
    if state not in ("on", "off"):
        return HttpResponse(f"unknown state {state!r}: on or off", status=400)
    if (busy := settling.running()) is not None:
        return busy
    value = {**settings.AGENT_SESSIONS, "TELEMETRY": {"ENABLED": state == "on"}}
    settings.AGENT_SESSIONS = value
    setting_changed.send(sender=type(settings), setting="AGENT_SESSIONS", value=value, enter=True)
    settling.settle_now()  # every round from the same state (``settling``)
    return HttpResponse(state)


urlpatterns = [path("_bench/telemetry/<str:state>/", switch), *floor_urlpatterns]
