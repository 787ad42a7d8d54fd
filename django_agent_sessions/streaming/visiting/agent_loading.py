"""Resolving ``AGENT_SESSIONS["AGENT"]``: an ``Agent``, or a factory that returns one."""

from __future__ import annotations

import inspect
from typing import Any

from agents import Agent
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from django_agent_sessions.conf import app_settings


def configured_target(path: Any = None) -> Any:
    """The object ``path`` (a dotted path, an Agent or a factory; by default the ``AGENT``
    setting) names: imported, not called. Raises ImproperlyConfigured."""
    path = path or app_settings.AGENT
    if not path:
        raise ImproperlyConfigured(
            "AGENT_SESSIONS['AGENT'] is not set: give the dotted path to an agents.Agent "
            "or to a function returning one, or override AgentSessionConsumer.get_agent()."
        )
    if not isinstance(path, str):
        return path
    try:
        return import_string(path)
    except ImportError as error:
        raise ImproperlyConfigured(f"The agent {path!r}: {error}") from error


async def load_agent(scope: Any, path: Any = None) -> Agent[Any]:
    """The agent for a connection (``path``: the one a run's order names, else the
    ``AGENT`` setting). A factory taking one argument receives the scope."""
    target = configured_target(path)
    if isinstance(target, Agent):
        return target
    if not callable(target):
        raise ImproperlyConfigured(
            f"AGENT_SESSIONS['AGENT'] names a {type(target).__name__}, not an Agent or a callable."
        )
    agent = target(scope) if _takes_an_argument(target) else target()
    if inspect.isawaitable(agent):
        agent = await agent
    if not isinstance(agent, Agent):
        raise ImproperlyConfigured(
            f"The AGENT_SESSIONS['AGENT'] factory returned a {type(agent).__name__}, not an Agent."
        )
    return agent


def _takes_an_argument(function: Any) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in parameters
    )
