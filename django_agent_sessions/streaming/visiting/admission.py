"""What a message must pass before anything of it is written: the sender's rate limit,
then their token budget. Each raises ``frames.BadFrame`` with the wire's code
(``rate_limited``, ``quota_exceeded``) for the client to be told."""

from __future__ import annotations

from typing import Any

from agents import Agent
from django.utils.translation import gettext as _

from django_agent_sessions.budgets import quotas
from django_agent_sessions.streaming.running import spending
from django_agent_sessions.streaming.visiting import ratelimit
from django_agent_sessions.streaming.wire import frames


async def admit(rate_limit_key: str, user: Any, agent: Agent[Any]) -> None:
    """Both checks, for a front end that runs the agent itself (ChatKit's server):
    the rate limit of ``rate_limit_key`` (``"user:<pk>"``, as the chat counts), then
    ``user``'s budget for ``agent``'s model."""
    await within_rate(rate_limit_key, "")
    await within_budget(user, agent, "")


async def within_rate(rate_limit_key: str, client_id: str) -> None:
    """Count one message of ``rate_limit_key``; ``rate_limited`` past the limit."""
    retry_after = await ratelimit.retry_after(rate_limit_key)
    if retry_after is not None:
        message = _("Too many messages; wait a moment.")
        raise frames.BadFrame("rate_limited", message, client_id, retry_after=retry_after)


async def within_budget(user: Any, agent: Agent[Any], client_id: str) -> None:
    """``quota_exceeded`` if ``user``'s token budget for ``agent``'s model is spent."""
    standing = await quotas.standing(user, spending.model_name(agent))
    if standing.exceeded:
        raise frames.quota_exceeded(standing.resets_at, client_id)
