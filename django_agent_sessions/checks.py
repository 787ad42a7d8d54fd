"""System checks. Ids are stable: ``django_agent_sessions.E0xx`` / ``W0xx``."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from agents import Agent
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import ImproperlyConfigured

# Imported with this module, from AppConfig.ready(), while only one thread runs: importing
# the SDK lazily from a check raced runserver's threads into an import deadlock.
from django_agent_sessions.agent_loading import configured_target
from django_agent_sessions.conf import DEFAULTS
from django_agent_sessions.limits import parse_rate
from django_agent_sessions.retention import parse_duration

_ID = "django_agent_sessions"
_SUPPORTED_VENDORS = {"sqlite", "postgresql"}


def check_settings(**kwargs: Any) -> list[CheckMessage]:
    value = getattr(settings, "AGENT_SESSIONS", {})
    if not isinstance(value, Mapping):
        return [
            Error(
                f"AGENT_SESSIONS must be a dict, not {type(value).__name__}.",
                hint="Set AGENT_SESSIONS = {...} with the keys in the README.",
                id=f"{_ID}.E001",
            )
        ]
    errors: list[CheckMessage] = []
    for key in sorted(set(value) - set(DEFAULTS)):
        errors.append(
            Error(
                f"AGENT_SESSIONS has an unknown key {key!r}.",
                hint=f"Known keys: {', '.join(sorted(DEFAULTS))}.",
                id=f"{_ID}.E002",
            )
        )
    errors.extend(_check_positive(value, "MAX_MESSAGE_BYTES", optional=False))
    errors.extend(_check_positive(value, "MAX_ITEM_BYTES", optional=True))
    errors.extend(_check_positive(value, "MAX_ITEM_DEPTH", optional=False))
    errors.extend(_check_retention(value))
    errors.extend(streaming_messages(value))
    return errors


def _check_retention(value: Mapping[str, Any]) -> list[CheckMessage]:
    if value.get("RETENTION") is None:
        return []
    try:
        parse_duration(value["RETENTION"])
    except ValueError as error:
        return [
            Error(
                f"AGENT_SESSIONS['RETENTION']: {error}",
                hint="Use None to keep conversations, or an age such as '30d'.",
                id=f"{_ID}.E030",
            )
        ]
    return []


def _check_positive(value: Mapping[str, Any], key: str, *, optional: bool) -> list[CheckMessage]:
    if key not in value:
        return []
    setting = value[key]
    if optional and setting is None:
        return []
    if isinstance(setting, int) and not isinstance(setting, bool) and setting > 0:
        return []
    allowed = "a positive int or None" if optional else "a positive int"
    return [
        Error(
            f"AGENT_SESSIONS[{key!r}] is {setting!r}; it must be {allowed}.",
            hint=f"Remove it to use the default ({DEFAULTS[key]!r}).",
            id=f"{_ID}.E003",
        )
    ]


def check_databases(databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    for alias, config in settings.DATABASES.items():
        messages.extend(database_messages(alias, config))
    return messages


def database_messages(alias: str, config: Mapping[str, Any]) -> list[CheckMessage]:
    engine = str(config.get("ENGINE", ""))
    vendor = engine.rsplit(".", 1)[-1]
    if vendor == "sqlite3":
        return _check_sqlite(alias, config)
    if vendor in _SUPPORTED_VENDORS or "postgres" in vendor:
        return []
    return [
        Warning(
            f"Database {alias!r} uses {engine}, which django-agent-sessions does not support.",
            hint="Store sessions on PostgreSQL or SQLite (a database router can send the "
            "app's models there).",
            id=f"{_ID}.W002",
        )
    ]


def _check_sqlite(alias: str, config: Mapping[str, Any]) -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    options = config.get("OPTIONS") or {}
    if str(options.get("transaction_mode", "")).upper() != "IMMEDIATE":
        messages.append(
            Warning(
                f"SQLite database {alias!r} does not use transaction_mode='IMMEDIATE'.",
                hint=(
                    "In SQLite's default DEFERRED mode, a transaction that reads before it "
                    "writes fails at once with 'database is locked' when another connection "
                    "writes, whatever the timeout. Set OPTIONS={'transaction_mode': "
                    "'IMMEDIATE', 'timeout': 20} (and journal_mode=WAL through "
                    "'init_command') for concurrent agent runs."
                ),
                id=f"{_ID}.W001",
            )
        )
    if sqlite3.sqlite_version_info < (3, 35):
        messages.append(
            Error(
                f"SQLite {sqlite3.sqlite_version} is too old for django-agent-sessions.",
                hint="It needs SQLite >= 3.35 for UPDATE/DELETE ... RETURNING.",
                id=f"{_ID}.E004",
            )
        )
    return messages


# Websocket streaming (E010+/W010+) ------------------------------------------------


def streaming_messages(value: Mapping[str, Any]) -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    messages.extend(_check_positive(value, "MAX_RUN_BYTES", optional=True))
    messages.extend(_check_positive(value, "DELTA_FLUSH_BYTES", optional=False))
    messages.extend(_check_positive(value, "HISTORY_LIMIT", optional=True))
    messages.extend(_check_positive(value, "HISTORY_MAX_BYTES", optional=True))
    messages.extend(_check_agent(value))
    messages.extend(_check_rate_limit(value))
    for key in ("DELTA_FLUSH_SECONDS", "RUN_LEASE_SECONDS"):
        setting = value.get(key, DEFAULTS[key])
        if isinstance(setting, bool) or not isinstance(setting, int | float) or setting <= 0:
            messages.append(
                Error(
                    f"AGENT_SESSIONS[{key!r}] is {setting!r}; it must be a positive number.",
                    hint=f"Remove it to use the default ({DEFAULTS[key]!r}).",
                    id=f"{_ID}.E012",
                )
            )
    for key in ("ALLOW_ANONYMOUS", "CONTINUE_RUNS_AFTER_DISCONNECT"):
        if not isinstance(value.get(key, False), bool):
            messages.append(
                Error(
                    f"AGENT_SESSIONS[{key!r}] is {value[key]!r}; it must be True or False.",
                    id=f"{_ID}.E013",
                )
            )
    if value.get("AGENT"):
        messages.extend(_check_websocket_deployment())
    return messages


def _check_agent(value: Mapping[str, Any]) -> list[CheckMessage]:
    if not value.get("AGENT"):
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


def _check_rate_limit(value: Mapping[str, Any]) -> list[CheckMessage]:
    rate = value.get("RATE_LIMIT", DEFAULTS["RATE_LIMIT"])
    if rate is None:
        return []
    try:
        parse_rate(rate)
    except ValueError as error:
        return [Error(f"AGENT_SESSIONS['RATE_LIMIT']: {error}.", id=f"{_ID}.E011")]
    return []


def _check_websocket_deployment() -> list[CheckMessage]:
    messages: list[CheckMessage] = []
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
