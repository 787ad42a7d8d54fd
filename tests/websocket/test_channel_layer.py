"""Fan-out, catch-up and cancel across worker processes through a real Redis server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid

import pytest

from django_agent_sessions.models import AgentRun, AgentSession
from tests.processes import REPO_ROOT, worker_env
from tests.remote_run import REPLY
from tests.websockets import Socket, login_cookie, of_type, text_of

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.redis,
    pytest.mark.usefixtures("closing_sockets"),
    # Worker processes and Redis: the wing across processes, the same on every database.
    pytest.mark.once,
]


@pytest.fixture
def redis_prefix(settings):
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        if os.environ.get("CI"):
            pytest.fail("REDIS_URL is not set: CI must run the Redis channel layer tests")
        pytest.skip("REDIS_URL is not set (bin/test starts Redis and sets it)")
    prefix = f"asgi-{uuid.uuid4().hex[:8]}:"
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": redis_url, "socket_timeout": None}],
                "prefix": prefix,
            },
        }
    }
    settings.AGENT_SESSIONS = {"AGENT": "tests.chat_agent.make_agent", "RATE_LIMIT": None}
    return prefix


@pytest.fixture
def alice_cookie(make_user, session_id):
    alice = make_user("alice")
    # The remote run writes to an existing conversation, and a socket that connects to an
    # existing conversation joins its group (connecting to a new id writes nothing).
    AgentSession.objects.create(session_id=session_id, owner=alice)
    return login_cookie(alice)


async def start_remote_run(session_id: str, prefix: str) -> asyncio.subprocess.Process:
    pk = await AgentSession.objects.values_list("pk", flat=True).aget(session_id=session_id)
    env = worker_env(AGENT_SESSIONS_CHANNEL_PREFIX=prefix)
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.remote_run",
        session_id,
        str(pk),
        env=env,
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_a_run_in_another_process_reaches_catches_up_and_cancels(
    redis_prefix, alice_cookie, session_id
):
    watching = Socket(session_id, alice_cookie)
    await watching.open()
    worker = await start_remote_run(session_id, redis_prefix)
    try:
        try:
            followed = await watching.receive(timeout=30)  # the worker process is starting
        except TimeoutError:
            worker.kill()
            out, err = await worker.communicate()
            raise AssertionError(f"no frame; worker said: {out!r} {err.decode()}") from None
        # The run's run.started reaches this socket as on the run's own worker, and makes
        # it follow the run: what it missed meanwhile comes as events, then the rest.
        assert followed["type"] == "run.started"
        started = followed
        before = await watching.until("text.delta")
        assert of_type(before, "item.completed")[0]["item"]["role"] == "user"
        await watching.until("text.delta")

        late = Socket(session_id, alice_cookie)
        history = await late.open()
        active = history["active_run"]
        assert active["run_id"] == started["run_id"]
        assert active["items"] == [
            {"kind": "message", "role": "user", "text": "Question for another worker"}
        ]
        assert active["text"]
        assert REPLY.startswith(active["text"])
        assert active["text"].startswith(text_of(before))

        await late.send({"type": "cancel"})
        assert (await watching.until("run.cancelled"))[-1]["run_id"] == started["run_id"]
        after = await late.until("run.cancelled")
        # The late socket saw exactly what followed its snapshot.
        assert after[0]["seq"] == active["seq"] + 1
        out, err = await asyncio.wait_for(worker.communicate(), 30)
        assert worker.returncode == 0, err.decode()
        assert json.loads(out.decode().strip().splitlines()[-1]) == {"status": "cancelled"}
        assert await AgentRun.objects.values_list("status", flat=True).aget() == "cancelled"
        await late.close()
    finally:
        if worker.returncode is None:
            worker.kill()
            await worker.wait()
        await watching.close()


async def test_an_idle_socket_survives_the_redis_read_timeout(
    redis_prefix, alice_cookie, session_id
):
    """redis-py >= 8 times out reads after 5 s unless told not to; an idle consumer's
    blocking receive must not die of it (it would be closed with 1011 every 5 s)."""
    from tests import chat_agent
    from tests.scripted import streamed_reply

    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await asyncio.sleep(6.5)
    chat_agent.script(streamed_reply("Still connected."))
    await socket.say("Are you there?")
    assert text_of(await socket.until("run.completed")) == "Still connected."
    await socket.close()


async def test_the_last_socket_leaving_stops_a_run_in_another_process(
    redis_prefix, alice_cookie, session_id
):
    watching = Socket(session_id, alice_cookie)
    await watching.open()
    worker = await start_remote_run(session_id, redis_prefix)
    try:
        assert (await watching.receive(timeout=30))["type"] == "run.started"  # following it
        await watching.until("text.delta")
        await watching.close()  # the run's worker has no socket of its own
        out, err = await asyncio.wait_for(worker.communicate(), 10)
        assert worker.returncode == 0, err.decode()
        assert json.loads(out.decode().strip().splitlines()[-1]) == {"status": "cancelled"}
        assert await AgentRun.objects.values_list("status", flat=True).aget() == "cancelled"
    finally:
        if worker.returncode is None:
            worker.kill()
            await worker.wait()
