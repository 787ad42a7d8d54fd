"""A run in a process where OpenTelemetry cannot be imported (``test_without_otel``).

The Agents SDK imports the API itself (through mcp), so it is imported first; then every
``opentelemetry`` module is made unimportable before the app is, as if the extra were
not installed. Prints what the test checks, as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys

import agents  # noqa: F401 - before the block: the SDK needs the API to import

for _name in list(sys.modules):
    if _name == "opentelemetry" or _name.startswith("opentelemetry."):
        sys.modules[_name] = None  # type: ignore[assignment]


async def _run() -> dict[str, object]:
    from agents import Agent
    from agents.testing import ScriptedModel
    from channels.layers import get_channel_layer

    from django_agent_sessions import DjangoSession, telemetry
    from django_agent_sessions.models import AgentRun, AgentSession
    from django_agent_sessions.streaming.running import active_runs, run_task, traced
    from tests.scripted import streamed_reply

    record = await AgentSession.objects.acreate(session_id="without-otel")
    agent = Agent(name="Plain", model=ScriptedModel([streamed_reply("Hello.")]))
    request = active_runs.RunRequest(
        agent=agent,
        text="Hi",
        session=DjangoSession("without-otel"),
        context=None,
        conversation_pk=int(record.pk),
        session_id="without-otel",
        user=None,
    )
    started = await run_task.start(request, channel_layer=get_channel_layer())
    assert started is not None
    assert started.task is not None
    await started.task
    run = await AgentRun.objects.aget(run_id=started.run_id)
    return {
        "otel": telemetry.otel is not None,
        "active": telemetry.active(),
        "no_span": telemetry.span("x", {"a": 1}) is telemetry.NO_SPAN,
        "run_config": traced.run_config() is not None,
        "status": run.status,
        "trace_id": run.trace_id,
        "items": len(await DjangoSession("without-otel").get_items()),
    }


if __name__ == "__main__":
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    print(json.dumps(asyncio.run(_run())))
