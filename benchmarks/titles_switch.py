"""The titles benchmark's URLconf: the floor view's, and a switch for
``AGENT_SESSIONS["TITLES"]`` (``POST /_bench/titles/on/``: the benchmark's title
function, ``streaming_app.write_title``; ``/off/``: None; ``setting_switch``)."""

from __future__ import annotations

from benchmarks.floor_view import urlpatterns as floor_urlpatterns
from benchmarks.setting_switch import switch_path

TITLE_FUNCTION = {"FUNCTION": "benchmarks.streaming_app.write_title"}

urlpatterns = [switch_path("titles", "TITLES", TITLE_FUNCTION, None), *floor_urlpatterns]
