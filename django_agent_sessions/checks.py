"""System checks of the settings and databases. Ids are stable:
``django_agent_sessions.E0xx`` / ``W0xx`` (the streaming wing's, E010+/W010+, are in
``streaming/checks.py``). Values are read through ``app_settings``, as the app reads them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning

from django_agent_sessions.conf import DEFAULTS, app_settings
from django_agent_sessions.conf.values import parse_duration

_ID = "django_agent_sessions"
_SUPPORTED_VENDORS = {"sqlite", "postgresql"}


def check_settings(**kwargs: Any) -> list[CheckMessage]:
    if not app_settings.is_dict():
        value = settings.AGENT_SESSIONS
        return [
            Error(
                f"AGENT_SESSIONS must be a dict, not {type(value).__name__}.",
                hint="Set AGENT_SESSIONS = {...} with the keys in the README.",
                id=f"{_ID}.E001",
            )
        ]
    errors: list[CheckMessage] = []
    for key in sorted(app_settings.configured_keys() - set(DEFAULTS)):
        errors.append(
            Error(
                f"AGENT_SESSIONS has an unknown key {key!r}.",
                hint=f"Known keys: {', '.join(sorted(DEFAULTS))}.",
                id=f"{_ID}.E002",
            )
        )
    errors.extend(check_positive("MAX_MESSAGE_BYTES", optional=False))
    errors.extend(check_positive("MAX_ITEM_BYTES", optional=True))
    errors.extend(check_positive("MAX_ITEM_DEPTH", optional=False))
    errors.extend(_check_retention())
    errors.extend(_check_search())
    return errors


_SEARCH_KEYS = {"ENABLED", "LANGUAGE", "TOOL_OUTPUTS"}


def _check_search() -> list[CheckMessage]:
    """``SEARCH``: None or a dict of known keys; ``ENABLED`` a bool (a typo such as
    "false" would leave search on and every write paying for it)."""
    value = app_settings.SEARCH
    problem = ""
    if value is not None and not isinstance(value, dict):
        problem = f"must be a dict or None, not {type(value).__name__}"
    elif value and set(value) - _SEARCH_KEYS:
        problem = f"has unknown keys {sorted(set(value) - _SEARCH_KEYS)}"
    elif value and not isinstance(value.get("ENABLED", True), bool):
        problem = "['ENABLED'] must be True or False"
    if not problem:
        return []
    hint = "Keys: ENABLED (True/False), LANGUAGE, TOOL_OUTPUTS (docs/integration.md, Search)."
    return [Error(f"AGENT_SESSIONS['SEARCH'] {problem}.", hint=hint, id=f"{_ID}.E031")]


def _check_retention() -> list[CheckMessage]:
    if app_settings.RETENTION is None:
        return []
    try:
        parse_duration(app_settings.RETENTION)
    except ValueError as error:
        return [
            Error(
                f"AGENT_SESSIONS['RETENTION']: {error}",
                hint="Use None to keep conversations, or an age such as '30d'.",
                id=f"{_ID}.E030",
            )
        ]
    return []


def check_positive(key: str, *, optional: bool) -> list[CheckMessage]:
    """E003 unless ``AGENT_SESSIONS[key]`` is a positive int (or None, if optional)."""
    setting = getattr(app_settings, key)
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
