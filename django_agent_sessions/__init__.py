"""Durable OpenAI Agents SDK sessions on the Django ORM.

The public API is what ``__all__`` names, imported from here; every module below may
move without breaking a project that does so. Django's conventional modules are public
too, by their own names: ``models``, ``signals``, ``exceptions``, ``urls``, ``routing``,
``consumers``, ``admin``.

The names resolve on first use so that ``import django_agent_sessions`` works before
``django.setup()`` (settings files, ASGI modules and tooling import it early).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django_agent_sessions.draining import Draining
    from django_agent_sessions.session import DjangoSession
    from django_agent_sessions.store.feedback import give as give_feedback
    from django_agent_sessions.store.search import search as search_conversations
    from django_agent_sessions.streaming import AgentRunContext, start_run, start_run_sync

# name -> (module, attribute): the one table of the public surface.
_PUBLIC: dict[str, tuple[str, str]] = {
    "AgentRunContext": ("streaming", "AgentRunContext"),
    "DjangoSession": ("session", "DjangoSession"),
    "Draining": ("draining", "Draining"),
    "give_feedback": ("store.feedback", "give"),
    "search_conversations": ("store.search", "search"),
    "start_run": ("streaming", "start_run"),
    "start_run_sync": ("streaming", "start_run_sync"),
}

__all__ = [  # the table's names, written out for type checkers and linters (a test holds it)
    "AgentRunContext",
    "DjangoSession",
    "Draining",
    "give_feedback",
    "search_conversations",
    "start_run",
    "start_run_sync",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    return getattr(import_module(f"{__name__}.{module_name}"), attribute)
