"""``AGENT_SESSIONS["TEMPORARY_TTL"]``, ``["FORCE_TEMPORARY"]`` and
``["TEMPORARY_GRACE_SECONDS"]``, read on use (never at import).

- ``TEMPORARY_TTL``: a duration (``"1d"``, ``"12h"``, ``"90min"`` or a ``timedelta``,
  parsed as ``RETENTION`` is): a temporary chat is removed this long after its last
  activity, even while a page is still open on it.
- ``FORCE_TEMPORARY``: ``False`` (the default), ``True`` (every new chat of the chat
  page is temporary), or a callable taking the user and returning a bool, or its
  dotted path (``"myproject.chats.forced"``): to force them for a group, say.
- ``TEMPORARY_GRACE_SECONDS``: a temporary chat whose last page closed is removed this
  many seconds later, unless a page opened it again meanwhile (a reload, a stream that
  reconnects, a worker that drains): long enough for those, short enough that it is
  gone soon after the person leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.utils.module_loading import import_string

from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.values import parse_duration

#: What a bad ``TEMPORARY_TTL`` falls back to (the system check reports the value).
FALLBACK_TTL = timedelta(days=1)


def ttl() -> timedelta:
    """``TEMPORARY_TTL`` parsed; the default's for a value the system check reports."""
    try:
        return parse_duration(app_settings.TEMPORARY_TTL)
    except ValueError:
        return FALLBACK_TTL


def grace_seconds() -> float:
    value = app_settings.TEMPORARY_GRACE_SECONDS
    valid = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    return float(value) if valid else 30.0


def forcing() -> bool | Callable[[Any], Any]:
    """``FORCE_TEMPORARY`` as a bool or a callable (a dotted path imported); raises
    ``ImportError`` or ``TypeError`` for a value the system check reports."""
    value = app_settings.FORCE_TEMPORARY
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        value = import_string(value)
    if not callable(value):
        raise TypeError(f"{value!r} is neither a bool nor a callable")
    rule: Callable[[Any], Any] = value
    return rule


def forced_for(user: Any) -> bool:
    """Whether every new chat of ``user`` (None or anonymous too) must be temporary.
    A setting that cannot be used forces them: leaving less behind is the safe side."""
    try:
        rule = forcing()
        return bool(rule if isinstance(rule, bool) else rule(user))
    except (ImportError, TypeError):
        return True
