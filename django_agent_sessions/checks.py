"""System checks. Ids are stable: ``django_agent_sessions.E0xx`` / ``W0xx``."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning

from django_agent_sessions.conf import DEFAULTS

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
    return errors


def _check_retention(value: Mapping[str, Any]) -> list[CheckMessage]:
    # Imported here: checks.py is imported while the app registry is still loading.
    from django_agent_sessions.retention import parse_duration

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
