"""``AgentRunContext``: what the tools of a run started from a tab receive as
``ctx.context``, and ``AGENT_SESSIONS["RUN_CONTEXT"]``, the project's say in it.

Public (``django_agent_sessions.AgentRunContext``): tools import it to type their
context. ``RUN_CONTEXT`` names a callable that takes the default context and returns the
one to use (the same one changed, a subclass, or anything else the project's tools
expect), for the websocket and the SSE transport alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from django_agent_sessions.conf import app_settings


@dataclass
class AgentRunContext:
    """Who is asking, in which conversation."""

    user: Any
    session_id: str  # the stored conversation id
    session: Any  # the run's DjangoSession
    scope: dict[str, Any]  # the connection's ASGI scope (the websocket's or the request's)


def configured_factory() -> Callable[[AgentRunContext], Any] | None:
    """The callable ``RUN_CONTEXT`` names, or None. Raises ImproperlyConfigured."""
    path = app_settings.RUN_CONTEXT
    if path is None:
        return None
    try:
        factory = import_string(path) if isinstance(path, str) else path
    except ImportError as error:
        raise ImproperlyConfigured(f"AGENT_SESSIONS['RUN_CONTEXT']: {error}") from error
    if not callable(factory):
        raise ImproperlyConfigured(
            f"AGENT_SESSIONS['RUN_CONTEXT'] names a {type(factory).__name__}, not a callable."
        )
    return factory  # type: ignore[no-any-return]


def run_context(default: AgentRunContext) -> Any:
    """What tools receive: ``RUN_CONTEXT`` applied to the default, or the default."""
    factory = configured_factory()
    return default if factory is None else factory(default)
