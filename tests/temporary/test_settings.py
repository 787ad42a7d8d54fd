"""``temporary.settings``: the TTL parsed as retention is, the grace, and who is forced
into temporary chats (a bool, a callable, its dotted path; a broken value forces)."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from django_agent_sessions.temporary import settings as temporary_settings


def configure(settings: Any, **values: Any) -> None:
    settings.AGENT_SESSIONS = values


def members_only(user: Any) -> bool:
    return bool(getattr(user, "member", False))


def test_the_ttl_is_a_duration(settings):
    configure(settings)
    assert temporary_settings.ttl() == timedelta(days=1)
    configure(settings, TEMPORARY_TTL="90min")
    assert temporary_settings.ttl() == timedelta(minutes=90)
    configure(settings, TEMPORARY_TTL=timedelta(hours=2))
    assert temporary_settings.ttl() == timedelta(hours=2)
    configure(settings, TEMPORARY_TTL="1m")  # reported by E130
    assert temporary_settings.ttl() == temporary_settings.FALLBACK_TTL


def test_the_grace(settings):
    configure(settings)
    assert temporary_settings.grace_seconds() == 30.0
    configure(settings, TEMPORARY_GRACE_SECONDS=0)
    assert temporary_settings.grace_seconds() == 0.0
    configure(settings, TEMPORARY_GRACE_SECONDS=-1)  # reported by E132
    assert temporary_settings.grace_seconds() == 30.0


@pytest.mark.parametrize(
    ("value", "member", "forced"),
    [
        (False, True, False),
        (True, False, True),
        (members_only, True, True),
        (members_only, False, False),
        ("tests.temporary.test_settings.members_only", True, True),
        ("tests.temporary.test_settings.members_only", False, False),
        ("tests.temporary.missing", False, True),  # broken: forced (E131 says so)
        (42, False, True),
    ],
)
def test_who_is_forced(settings, value, member, forced):
    configure(settings, FORCE_TEMPORARY=value)
    assert temporary_settings.forced_for(SimpleNamespace(member=member)) is forced
