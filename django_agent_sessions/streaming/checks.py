"""System checks of the streaming settings and of the websocket deployment (E010+/W010+)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents import Agent
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from django_agent_sessions.checks import check_positive
from django_agent_sessions.conf import DEFAULTS, app_settings
from django_agent_sessions.conf.transports import channels_installed, chat_transport
from django_agent_sessions.conf.values import parse_duration
from django_agent_sessions.layers.checks import rate_limit_cache_warnings
from django_agent_sessions.streaming.visiting import while_running
from django_agent_sessions.streaming.visiting.agent_loading import configured_target
from django_agent_sessions.streaming.visiting.context import configured_factory
from django_agent_sessions.streaming.visiting.ratelimit import parse_rate

_ID = "django_agent_sessions"
# Channel layers that reach one process only.
_PER_PROCESS_LAYERS = ("channels.layers.InMemoryChannelLayer",)


_POSITIVE_SECONDS = (
    "DELTA_FLUSH_SECONDS",
    "RUN_LEASE_SECONDS",
    "PRESENCE_TIMEOUT_SECONDS",
    "CATCHUP_TIMEOUT_SECONDS",
    "GAP_TIMEOUT_SECONDS",
    "FOLLOW_CHECK_SECONDS",
    "DRAIN_SECONDS",
    "SETTLE_SECONDS",
    "SWEEP_SECONDS",
    "SSE_HEARTBEAT_SECONDS",
    "SSE_STREAM_SECONDS",
    "INTERRUPT_SECONDS",
    "TITLE_WAIT_SECONDS",
)


def check_streaming_settings(**kwargs: Any) -> list[CheckMessage]:
    if not app_settings.is_dict():
        return []  # reported by check_settings (E001)
    messages: list[CheckMessage] = []
    messages.extend(check_positive("MAX_RUN_BYTES", optional=True))
    messages.extend(check_positive("DELTA_FLUSH_BYTES", optional=False))
    messages.extend(check_positive("HISTORY_LIMIT", optional=True))
    messages.extend(check_positive("HISTORY_MAX_BYTES", optional=True))
    messages.extend(_check_agent())
    messages.extend(_check_run_context())
    messages.extend(_check_rate_limit())
    messages.extend(_check_approval_timeout())
    messages.extend(_check_transport())
    messages.extend(while_running.check())
    for key in _POSITIVE_SECONDS:
        setting = getattr(app_settings, key)
        if isinstance(setting, bool) or not isinstance(setting, int | float) or setting <= 0:
            messages.append(
                Error(
                    f"AGENT_SESSIONS[{key!r}] is {setting!r}; it must be a positive number.",
                    hint=f"Remove it to use the default ({DEFAULTS[key]!r}).",
                    id=f"{_ID}.E012",
                )
            )
    for key in ("ALLOW_ANONYMOUS", "CONTINUE_RUNS_AFTER_DISCONNECT", "SWEEP_IN_WORKERS"):
        setting = getattr(app_settings, key)
        if not isinstance(setting, bool):
            messages.append(
                Error(
                    f"AGENT_SESSIONS[{key!r}] is {setting!r}; it must be True or False.",
                    id=f"{_ID}.E013",
                )
            )
    if app_settings.AGENT and chat_transport() == "websocket":
        messages.extend(_check_websocket_deployment())
    return messages


def _check_agent() -> list[CheckMessage]:
    if not app_settings.AGENT:
        return []
    try:
        target = configured_target()
    except ImproperlyConfigured as error:
        problem = str(error)
    else:
        if isinstance(target, Agent) or callable(target):
            return []
        problem = f"AGENT_SESSIONS['AGENT'] names a {type(target).__name__}."
    return [
        Error(
            problem,
            hint="Give the dotted path to an agents.Agent or to a function returning one.",
            id=f"{_ID}.E010",
        )
    ]


def _check_run_context() -> list[CheckMessage]:
    try:
        configured_factory()
    except ImproperlyConfigured as error:
        hint = "Give the dotted path to a function that takes an AgentRunContext."
        return [Error(str(error), hint=hint, id=f"{_ID}.E021")]
    return []


def _check_approval_timeout() -> list[CheckMessage]:
    try:
        parse_duration(app_settings.APPROVAL_TIMEOUT)
    except ValueError as error:
        return [
            Error(
                f"AGENT_SESSIONS['APPROVAL_TIMEOUT']: {error}",
                hint="Use how long a run may wait for a decision, such as '1h' or '15min'.",
                id=f"{_ID}.E040",
            )
        ]
    return []


def _check_rate_limit() -> list[CheckMessage]:
    rate = app_settings.RATE_LIMIT
    if rate is None:
        return []
    try:
        parse_rate(rate)
    except ValueError as error:
        return [Error(f"AGENT_SESSIONS['RATE_LIMIT']: {error}.", id=f"{_ID}.E011")]
    return []


_GUIDE = "See docs/integration.md."


def _check_wiring() -> list[CheckMessage]:
    """The mistakes that otherwise show only in the browser (a 404 or 500 handshake)."""
    messages: list[CheckMessage] = []
    apps = list(getattr(settings, "INSTALLED_APPS", []))
    if not getattr(settings, "ASGI_APPLICATION", None):
        messages.append(
            Error(
                "AGENT_SESSIONS['AGENT'] is set but ASGI_APPLICATION is not: the chat's "
                "websocket would get a 404.",
                hint='Set ASGI_APPLICATION = "mysite.asgi.application" and route '
                "django_agent_sessions.routing.websocket_urlpatterns in asgi.py. " + _GUIDE,
                id=f"{_ID}.E014",
            )
        )
    if "channels" not in apps:
        messages.append(
            Error(
                "AGENT_SESSIONS['AGENT'] is set but 'channels' is not in INSTALLED_APPS.",
                hint="Add 'channels' to INSTALLED_APPS. " + _GUIDE,
                id=f"{_ID}.E015",
            )
        )
    if "daphne" not in apps:
        messages.append(
            Warning(
                "'daphne' is not in INSTALLED_APPS: runserver will not serve the websocket.",
                hint="Put 'daphne' first in INSTALLED_APPS, or serve the project with "
                "another ASGI server (then silence this warning). " + _GUIDE,
                id=f"{_ID}.W014",
            )
        )
    elif "django.contrib.staticfiles" in apps and apps.index("daphne") > apps.index(
        "django.contrib.staticfiles"
    ):
        messages.append(
            Error(
                "'daphne' comes after 'django.contrib.staticfiles' in INSTALLED_APPS, so "
                "runserver is staticfiles' (HTTP only) and the websocket is never served.",
                hint='Put it first: INSTALLED_APPS = ["daphne", *INSTALLED_APPS, ...]. ' + _GUIDE,
                id=f"{_ID}.E016",
            )
        )
    for alias, layer in (getattr(settings, "CHANNEL_LAYERS", None) or {}).items():
        backend = layer.get("BACKEND", "") if isinstance(layer, Mapping) else ""
        try:
            import_string(backend)
        except ImportError as error:
            extra = " (pip install 'django-agent-sessions[redis]')" if "redis" in backend else ""
            messages.append(
                Error(
                    f"Channel layer {alias!r}: its BACKEND {backend!r} cannot be imported "
                    f"({error}); the first websocket handshake would fail with a 500.",
                    hint=f"Install the package that provides it{extra}, or use "
                    "channels.layers.InMemoryChannelLayer for one process.",
                    id=f"{_ID}.E017",
                )
            )
    return messages


def _check_websocket_deployment() -> list[CheckMessage]:
    messages: list[CheckMessage] = _check_wiring()
    if "*" in getattr(settings, "ALLOWED_HOSTS", []):
        messages.append(
            Warning(
                "ALLOWED_HOSTS contains '*', so AllowedHostsOriginValidator accepts "
                "websocket connections from every web site.",
                hint="Browsers send cookies with cross-site websocket handshakes: list "
                "your hosts in ALLOWED_HOSTS.",
                id=f"{_ID}.W010",
            )
        )
    messages.extend(_check_redis_timeouts())
    messages.extend(_check_rate_limit_cache())
    if not getattr(settings, "CHANNEL_LAYERS", None):
        messages.append(
            Warning(
                "CHANNEL_LAYERS is not configured; agent runs cannot be streamed.",
                hint="Use channels_redis in production (every worker process must share "
                "it), or channels.layers.InMemoryChannelLayer for a single process.",
                id=f"{_ID}.W011",
            )
        )
    return messages


def _check_redis_timeouts() -> list[CheckMessage]:
    """redis-py >= 8 times out socket reads after 5 s by default; channels_redis blocks
    in BZPOPMIN for 5 s, so every idle consumer dies with 1011 unless the timeout is off."""
    try:
        import redis
    except ImportError:
        return []
    if int(str(redis.__version__).split(".")[0]) < 8:
        return []
    for alias, layer in (getattr(settings, "CHANNEL_LAYERS", None) or {}).items():
        if "channels_redis" not in str(layer.get("BACKEND", "")):
            continue
        hosts = (layer.get("CONFIG") or {}).get("hosts") or ["redis://localhost:6379"]
        if all(isinstance(h, Mapping) and "socket_timeout" in h for h in hosts):
            continue
        return [
            Warning(
                f"Channel layer {alias!r}: redis-py {redis.__version__} closes idle "
                "websocket consumers after 5 seconds (read timeout).",
                hint='Give each host as {"address": REDIS_URL, "socket_timeout": None}.',
                id=f"{_ID}.W012",
            )
        ]
    return []


def _check_rate_limit_cache() -> list[CheckMessage]:
    """W013 for the websocket transport: Channels' layer (``layers.checks``)."""
    layer = (getattr(settings, "CHANNEL_LAYERS", None) or {}).get("default") or {}
    backend = str(layer.get("BACKEND", ""))
    if not backend or backend in _PER_PROCESS_LAYERS:
        return []
    return rate_limit_cache_warnings(backend)


def _check_transport() -> list[CheckMessage]:
    transport = app_settings.TRANSPORT
    if transport not in (None, "websocket", "sse"):
        return [
            Error(
                f"AGENT_SESSIONS['TRANSPORT'] is {transport!r}.",
                hint='Use "websocket", "sse", or None (websocket when Channels is configured).',
                id=f"{_ID}.E019",
            )
        ]
    if transport == "websocket" and not channels_installed():
        return [
            Error(
                "AGENT_SESSIONS['TRANSPORT'] is 'websocket', but Channels is not installed.",
                hint='pip install "django-agent-sessions[websocket]", or use "sse".',
                id=f"{_ID}.E020",
            )
        ]
    return []
