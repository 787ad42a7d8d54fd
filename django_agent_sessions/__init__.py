"""Durable OpenAI Agents SDK sessions on the Django ORM.

``DjangoSession`` is resolved lazily so that ``import django_agent_sessions`` works
before ``django.setup()`` (settings files, ASGI modules and tooling import it early).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django_agent_sessions.session import DjangoSession

__all__ = ["DjangoSession"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "DjangoSession":
        from django_agent_sessions.session import DjangoSession

        return DjangoSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
