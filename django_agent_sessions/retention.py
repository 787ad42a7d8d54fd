"""Removing stored conversations: clearing, deleting and pruning by age, and the
``RETENTION`` setting. The transactions are ``store.removal``'s (re-exported here): none
loads an item, and each locks the conversation rows first.
"""

from __future__ import annotations

from datetime import timedelta

from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.values import parse_duration
from django_agent_sessions.store.removal import (
    DEFAULT_BATCH_SIZE,
    Removed,
    clear_conversations,
    delete_conversations,
    prune,
)

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "Removed",
    "clear_conversations",
    "default_retention",
    "delete_conversations",
    "parse_duration",
    "prune",
]


def default_retention() -> timedelta | None:
    """``AGENT_SESSIONS["RETENTION"]`` parsed, or None when conversations are kept."""
    value = app_settings.RETENTION
    return None if value is None else parse_duration(value)
