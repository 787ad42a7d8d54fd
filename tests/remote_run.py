"""A run in another worker process: ``python -m tests.remote_run SESSION_ID SESSION_PK``.

Started by the channel-layer tests with the test run's database and Redis prefix. It
streams a long reply to the conversation's group and prints the outcome as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys

import django

django.setup()

from agents import Agent  # noqa: E402
from channels.layers import get_channel_layer  # noqa: E402

from django_agent_sessions import DjangoSession  # noqa: E402
from django_agent_sessions.streaming.running import active_runs, run_task  # noqa: E402
from tests.scripted import ScriptedModel, streamed_reply  # noqa: E402

REPLY = "A reply from another worker process, streamed slowly through Redis. " * 4


async def main(session_id: str, session_pk: int) -> None:
    agent = Agent(name="Remote", model=ScriptedModel([streamed_reply(REPLY, delay=0.05)]))
    request = active_runs.RunRequest(
        agent=agent,
        text="Question for another worker",
        session=DjangoSession(session_id),
        context=None,
        conversation_pk=session_pk,
        session_id=session_id,
        user=None,
    )
    active = await run_task.start(request, channel_layer=get_channel_layer())
    assert active is not None
    assert active.task is not None
    await active.task
    print(json.dumps({"status": active.streamed.outcome.status}), flush=True)


if __name__ == "__main__":
    from agents import set_tracing_disabled

    set_tracing_disabled(True)
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
