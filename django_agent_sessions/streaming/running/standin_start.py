"""TEMPORARY development stand-in for start_run_sync (replaced by main's). Not for merge."""

from __future__ import annotations

import uuid
from typing import Any

from agents import Agent, Runner
from agents.usage import Usage
from django.utils.module_loading import import_string

from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import RunRefused
from django_agent_sessions.models import AgentSession
from django_agent_sessions.session import DjangoSession
from django_agent_sessions.store import runs


def start_run_sync(
    session_id: str | None,
    input: str,
    *,
    agent: str | None = None,
    owner: Any = None,
    context: Any = None,
    origin: str = "code",
) -> str:
    session_id = session_id or uuid.uuid4().hex
    session, _ = AgentSession.objects.get_or_create(
        session_id=session_id, defaults={"owner": owner}
    )
    started = runs.start.sync(session.pk, agent_name="standin", lease_seconds=60)
    if started is None:
        raise RunRefused("busy", "The conversation has a run already.")
    target = import_string(agent or app_settings.AGENT)
    built = target if isinstance(target, Agent) else target()
    Runner.run_sync(built, input, session=DjangoSession(session_id))
    runs.finish.sync(started.pk, status="completed", usage=Usage(), session_pk=session.pk)
    return started.run_id


async def start_run(*args: Any, **kwargs: Any) -> str:
    from asgiref.sync import sync_to_async

    return await sync_to_async(start_run_sync, thread_sensitive=False)(*args, **kwargs)
