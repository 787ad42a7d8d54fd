"""The tracing benchmark's URLconf: the floor view's, and a switch for the app's telemetry
(``AGENT_SESSIONS["TELEMETRY"]["ENABLED"]``: ``POST /_bench/telemetry/on/`` and ``/off/``,
``setting_switch``)."""

from __future__ import annotations

from benchmarks.floor_view import urlpatterns as floor_urlpatterns
from benchmarks.setting_switch import switch_path

urlpatterns = [
    switch_path("telemetry", "TELEMETRY", {"ENABLED": True}, {"ENABLED": False}),
    *floor_urlpatterns,
]
