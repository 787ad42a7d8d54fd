"""Runs tell the truth through crashes and restarts, in the documented production mode.

Two daphne workers of the example project share a PostgreSQL cluster and a Redis server
of this module's own (``tests/services.py``), so the tests can kill a worker with
SIGKILL and restart PostgreSQL and Redis for real without disturbing the rest of the
suite. Clients are plain websockets (``example_project/tests/live.py``).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest
import websockets

from example_project.tests.live import LiveSocket
from example_project.tests.run_truth_live_helpers import (  # noqa: F401 - the fixtures
    LEASE,
    Stack,
    live,
    new_id,
    read_lines,
    run_status,
    stack,
    wait_for,
)
from example_project.tests.servers import REPO_ROOT

pytestmark = [pytest.mark.redis, pytest.mark.timeout(300), pytest.mark.long(90)]

STORY = "Tell me a long story"


# 2. A killed worker's run ends visibly on the other workers --------------------------


async def test_a_killed_workers_run_ends_as_worker_lost_for_every_watcher(live):  # noqa: F811
    conversation = new_id()
    a, b = live.socket(0, conversation), live.socket(1, conversation)
    await a.open()
    await b.open()
    await a.send({"type": "user_message", "text": STORY})
    # b is on the other worker: it learns of the run from its start or a catch-up, and
    # follows it from there (docs/wire-protocol.md, "Fan-out between tabs and workers").
    run_id = await b.until_run()
    await b.until("text.delta")

    live.workers[0].process.kill()  # SIGKILL: no cleanup of any kind
    live.workers[0].process.wait(timeout=15)
    killed_at = time.monotonic()
    await b.send({"type": "cancel", "run_id": run_id})

    frames = await b.until("run.completed", "run.cancelled", "run.failed", timeout=LEASE * 4)
    waited = time.monotonic() - killed_at
    print(f"MEASURED worker_lost reached the other worker {waited:.1f}s after SIGKILL")
    end = frames[-1]
    assert end["type"] == "run.failed", end
    assert end["run_id"] == run_id
    assert end["error"]["code"] == "worker_lost"
    assert waited < LEASE * 1.25 + 1.0, waited  # the documented bound, and 1 s of load
    status, error = run_status(live, run_id)
    assert status == "failed"
    assert "worker" in error.lower()

    # A reload shows no active run, and the conversation takes the next message at once.
    reloaded = live.socket(1, conversation)
    history = await reloaded.open()
    assert history["active_run"] is None
    await reloaded.send({"type": "user_message", "text": "Are you there?"})
    assert (await reloaded.until("run.completed", "run.failed", "error"))[-1][
        "type"
    ] == "run.completed"
    for socket in (b, reloaded):
        await socket.close()


async def test_the_sweep_ends_a_killed_workers_run_in_a_conversation_nobody_opens(live):  # noqa: F811
    """Nobody watches: no worker sweeps it, ``manage.py agent_sessions_sweep`` does. It
    runs as operators run it, already going (``--every``) when the worker dies."""
    sweep = subprocess.Popen(
        [sys.executable, "manage.py", "agent_sessions_sweep", "--every", "1"],
        cwd=REPO_ROOT,
        env={**live.env, "PYTHONUNBUFFERED": "1"},  # each report as it is made
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    reader = threading.Thread(target=read_lines, args=(sweep.stdout, output), daemon=True)
    reader.start()
    report = "Ended 1 run(s) whose worker died"
    try:
        assert await wait_for(lambda: any("Ended" in line for line in output), 60), output
        conversation = new_id()
        socket = live.socket(0, conversation)
        await socket.open()
        await socket.send({"type": "user_message", "text": STORY})
        run_id = (await socket.until("run.started"))[-1]["run_id"]
        await socket.until("text.delta")
        live.workers[0].process.kill()  # the socket goes with it; nobody opens the conversation
        live.workers[0].process.wait(timeout=15)
        killed_at, seen = time.monotonic(), len(output)
        # The sweep's own report is the event: the run's row changes a moment before it.
        ended = await wait_for(lambda: any(report in line for line in output[seen:]), LEASE * 3)
        waited = time.monotonic() - killed_at
    finally:
        sweep.terminate()
        sweep.wait(timeout=15)
        reader.join(timeout=15)
    print(f"MEASURED the sweep ended the lost run {waited:.1f}s after SIGKILL")
    assert ended, "".join(output)
    assert run_status(live, run_id)[0] == "failed"
    assert waited < LEASE * 1.25 + 1.0, waited  # the documented bound, and 1 s of load
    open_calls = live.query(
        "SELECT count(*) FROM django_agent_sessions_sessionitem i"
        " JOIN django_agent_sessions_agentsession s ON s.id = i.session_id"
        " WHERE s.session_id = %s AND i.item_type = 'function_call' AND NOT EXISTS ("
        "  SELECT 1 FROM django_agent_sessions_sessionitem o WHERE o.session_id = i.session_id"
        "  AND o.call_id = i.call_id AND o.item_type = 'function_call_output')",
        conversation,
    )
    assert open_calls == [(0,)]


# 3. PostgreSQL restarts -----------------------------------------------------------------


async def test_a_run_streaming_across_a_postgres_restart_completes_and_is_saved(live):  # noqa: F811
    conversation = new_id()
    socket = live.socket(0, conversation)
    await socket.open()
    await socket.send({"type": "user_message", "text": STORY})
    await socket.until("text.delta")
    restart_at = time.monotonic()
    live.postgres.restart()
    print(f"MEASURED pg_ctl restart -m fast took {time.monotonic() - restart_at:.1f}s")
    end = (await socket.until("run.completed", "run.cancelled", "run.failed", timeout=90))[-1]
    assert end["type"] == "run.completed", end
    await socket.close()

    reloaded = live.socket(1, conversation)
    history = await reloaded.open()
    kinds = [(item["kind"], item.get("role")) for item in history["items"]]
    assert kinds[-1] == ("message", "assistant"), kinds
    assert history["items"][-1]["text"].startswith("Once upon a time")
    await reloaded.close()


async def test_a_message_sent_on_the_end_of_a_run_is_never_busy_across_a_restart(live):  # noqa: F811
    """The end is recorded before it is told: a message sent the moment a terminal frame
    arrives starts the next run, also when the run's end met a restarted PostgreSQL."""
    socket = live.socket(0, new_id())
    await socket.open()
    ends = []
    for n in range(5):  # RATE_LIMIT is 6/d for this user
        await socket.send({"type": "user_message", "text": STORY if n == 0 else f"hi {n}"})
        if n == 0:
            await socket.until("text.delta")
            live.postgres.restart()  # the first run ends on a restarted database
        frames = await socket.until("run.completed", "run.failed", "error", timeout=90)
        ends.append(frames[-1].get("code", frames[-1]["type"]))
    assert ends == ["run.completed"] * 5, ends
    await socket.close()


SESSION_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    import django
    django.setup()
    from django_agent_sessions import DjangoSession

    async def main():
        session = DjangoSession(sys.argv[1])
        for line in sys.stdin:
            command = line.strip()
            try:
                if command == "add":
                    await session.add_items([{"role": "user", "content": "hello"}])
                    print(json.dumps("ok"), flush=True)
                elif command == "count":
                    print(json.dumps(len(await session.get_items())), flush=True)
            except Exception as error:
                print(json.dumps(f"error: {type(error).__name__}"), flush=True)

    asyncio.run(main())
    """
)


def test_djangosession_uses_a_fresh_connection_after_a_postgres_restart(live):  # noqa: F811
    """The example's settings (CONN_MAX_AGE=600, CONN_HEALTH_CHECKS=True): the first
    operation after a restart succeeds."""
    worker = subprocess.Popen(
        [sys.executable, "-c", SESSION_SCRIPT, f"restart-{new_id()}"],
        cwd=REPO_ROOT,
        env=live.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdin is not None
    assert worker.stdout is not None

    def ask(command: str) -> Any:
        worker.stdin.write(command + "\n")
        worker.stdin.flush()
        return __import__("json").loads(worker.stdout.readline())

    try:
        assert ask("add") == "ok"
        live.postgres.restart()
        assert ask("add") == "ok"
        live.postgres.restart()
        assert ask("count") == 2
    finally:
        worker.stdin.close()
        worker.wait(timeout=30)


# 4. Redis restarts ----------------------------------------------------------------------


async def _open_and_stay(stack: Stack, worker: int, conversation: str) -> LiveSocket:  # noqa: F811
    """Reconnect as the page does (with a short backoff) until a socket opens and stays
    open for two seconds."""
    deadline = time.monotonic() + 30
    while True:
        socket = stack.socket(worker, conversation)
        try:
            await socket.open()
            await asyncio.wait_for(socket.connection.recv(), 2)
        except asyncio.TimeoutError:
            return socket  # open, and quiet: usable
        except (websockets.ConnectionClosed, OSError) as error:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no socket stays open after a Redis restart: {error}"
                ) from error
        await socket.close()
        await asyncio.sleep(0.5)


async def test_after_a_redis_restart_the_first_run_on_each_worker_succeeds(live):  # noqa: F811
    conversations = [new_id(), new_id()]
    sockets = [live.socket(n, conversations[n]) for n in (0, 1)]
    for socket in sockets:
        await socket.open()
    live.redis.restart()
    restarted_at = time.monotonic()
    for n in (0, 1):
        # A socket either closes (1011; the page reconnects, acceptable) or stays open,
        # and then it must still see its conversation's runs.
        try:
            await sockets[n].receive(timeout=5)
            raise AssertionError("a frame nobody asked for")
        except websockets.ConnectionClosed as closed:
            print(f"MEASURED worker {n}: after a Redis restart the socket closed ({closed.rcvd})")
            sockets[n] = await _open_and_stay(live, n, conversations[n])
        except asyncio.TimeoutError:
            print(f"MEASURED worker {n}: the socket stayed open across the Redis restart")
    for n in (0, 1):
        watcher = live.socket(1 - n, conversations[n])  # the other worker watches too
        await watcher.open()
        await sockets[n].send({"type": "user_message", "text": f"hello worker {n}"})
        # The watcher (of the other worker) learns the end as an event or, when the
        # layer lost it, as the stored reply in a history frame.
        frames = await sockets[n].until_end(timeout=90)
        assert frames[0]["type"] == "run.started", frames
        assert frames[-1]["type"] == "run.completed", frames
        end = (await watcher.until_end(timeout=90))[-1]
        assert end["type"] == "run.completed" or end["items"][-1]["role"] == "assistant", end
        after = time.monotonic() - restarted_at
        print(f"MEASURED worker {n}: its first run completed {after:.1f}s after the restart")
        await watcher.close()
        await sockets[n].close()


# 7. The rate limit is shared by the workers --------------------------------------------


async def test_the_rate_limit_counts_runs_on_every_worker_together(live):  # noqa: F811
    # RATE_LIMIT is 6/d: eight conversations, alternating workers, one run each.
    outcomes = []
    for n in range(8):
        socket = live.socket(n % 2, new_id())
        await socket.open()
        await socket.send({"type": "user_message", "text": f"hi {n}"})
        frame = (await socket.until("run.started", "error"))[-1]
        outcomes.append(frame.get("code", frame["type"]))
        if frame["type"] == "run.started":
            await socket.until("run.completed", "run.failed")
        await socket.close()
    assert outcomes == ["run.started"] * 6 + ["rate_limited"] * 2
