"""Runs on task workers behind two web workers, through every fault the web tier meets.

The example project with ``RUNS=tasks`` (``tasks_tier``): two web workers and two
``db_worker`` task workers, on both transports (daphne and the Redis layer; uvicorn and
PostgreSQL's LISTEN/NOTIFY). A tab on each web worker follows one conversation:

- a tool call approved from the tab on web worker 2 resumes on a task worker, and a Stop
  from that tab ends a run the tab on web worker 1 started;
- a run goes on through a PostgreSQL restart and (websocket) a Redis restart, and both
  tabs end showing the stored reply;
- a task worker killed with SIGKILL mid-run: the other task worker's sweep ends the run
  ``worker_lost`` within the lease, every tab is told, and the agent is not run again.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import pytest
import websockets

from example_project.tests.tasks_tier import LEASE, Tier, live_tier, tasks_deployment  # noqa: F401
from tests.live_clients import decide_from, frames_until, open_tab, stop_from
from tests.shown import TERMINAL, Shown

# Worker processes of a task backend: bin/test --full only (docs/tasks.md, "Tests").
pytestmark = [pytest.mark.full, pytest.mark.timeout(300), pytest.mark.long(60)]

STORY = "Tell me a long story"
EMAIL = "Please email everyone about the fire drill on Friday"
GONE = (
    OSError,
    EOFError,
    AssertionError,
    asyncio.IncompleteReadError,
    websockets.WebSocketException,
)


async def tab_on(tier: Tier, web: int, session_id: str) -> Any:
    """A tab of the tier's transport on web worker ``web``, past its ``history`` frame."""
    tab = await open_tab(tier.transport, tier.port(web), session_id, tier.cookie, chat="")
    assert (await tab.frame())["type"] == "history"
    return tab


async def shown_to_the_end(tier: Tier, web: int, session_id: str, tab: Any, page: Shown) -> Any:
    """Folds the tab's frames into ``page`` until the run ended; a tab a fault closed is
    opened again on the same web worker, as the page does. Returns the tab in use."""
    deadline = time.monotonic() + 60
    while not page.ended:
        assert time.monotonic() < deadline, vars(page)
        try:
            page.see(await tab.frame())
        except GONE:
            await asyncio.sleep(0.2)  # the page's reconnection backs off too
            try:
                tab = await open_tab(
                    tier.transport, tier.port(web), session_id, tier.cookie, chat=""
                )
            except GONE:
                continue
    return tab


async def waiting_call(tab: Any) -> str:
    """The id of the tool call the tab is asked to decide: from ``approval.requested``,
    or from the ``history`` of a tab that caught up on a run already waiting (a tab open
    on a new id on another web worker joins once the conversation exists)."""
    while True:
        frame = await tab.frame()
        if frame["type"] == "approval.requested":
            return str(frame["call_id"])
        if frame["type"] == "history" and frame["pending_approvals"]:
            return str(frame["pending_approvals"][0]["call_id"])


def stored_reply(tier: Tier, session_id: str) -> str:
    rows = tier.query(
        "SELECT i.payload FROM django_agent_sessions_sessionitem i"
        " JOIN django_agent_sessions_agentsession s ON s.id = i.session_id"
        " WHERE s.session_id = %s AND i.role = 'assistant' ORDER BY i.id DESC LIMIT 1",
        session_id,
    )
    assert rows, session_id
    payload = rows[0][0]
    return str((json.loads(payload) if isinstance(payload, str) else payload)["content"][0]["text"])


def runs_of(tier: Tier, session_id: str) -> list[tuple[str, str, int, str]]:
    """Each run of the conversation: status, error code, executions claimed, claimer."""
    return tier.query(
        "SELECT r.status, r.error_code, o.claimed, o.claimed_by"
        " FROM django_agent_sessions_agentrun r"
        " JOIN django_agent_sessions_agentsession s ON s.id = r.session_id"
        " JOIN django_agent_sessions_runorder o ON o.run_id = r.id"
        " WHERE s.session_id = %s ORDER BY r.started_at",
        session_id,
    )


def on_a_task_worker(tier: Tier, claimed_by: str) -> bool:
    return any(claimed_by.endswith(f":{worker.pid}") for worker in tier.tasks)


async def test_approved_and_stopped_from_the_other_web_worker(live_tier):  # noqa: F811
    tier, session_id = live_tier, uuid.uuid4().hex
    starter, other = await tab_on(tier, 0, session_id), await tab_on(tier, 1, session_id)
    await starter.say(EMAIL)
    await decide_from(other, await waiting_call(other), True)
    for tab in (starter, other):
        ended: list[dict[str, Any]] = []
        await frames_until(tab, TERMINAL, ended)
        assert ended[-1]["type"] == "run.completed", ended
    assert stored_reply(tier, session_id).startswith("Done: the email")

    await starter.say(STORY)
    await frames_until(other, {"text.delta"}, [])
    asked = time.monotonic()
    await stop_from(other)
    for tab in (other, starter):
        stopped: list[dict[str, Any]] = []
        await frames_until(tab, TERMINAL, stopped)
        assert stopped[-1]["type"] == "run.cancelled", stopped
    print(
        f"MEASURED {tier.transport}: Stop from web worker 2 to run.cancelled in "
        f"{(time.monotonic() - asked) * 1000:.0f} ms"
    )
    for tab in (starter, other):
        await tab.close()
    runs = runs_of(tier, session_id)
    # The approved run ran twice on task workers (its start, its resumption), each once.
    assert [run[:3] for run in runs] == [("completed", "", 2), ("cancelled", "", 1)]
    assert all(on_a_task_worker(tier, run[3]) for run in runs), runs
    assert "Traceback" not in tier.logs()


async def across(tier: Tier, fault: Any) -> None:
    """A story started on web worker 1 and followed on web worker 2, ``fault()`` called
    once both tabs saw its text: the run completes, and both end showing the stored reply."""
    session_id = uuid.uuid4().hex
    tabs = [await tab_on(tier, 0, session_id), await tab_on(tier, 1, session_id)]
    pages = [Shown(), Shown()]
    await tabs[0].say(STORY)
    for tab, page in zip(tabs, pages, strict=True):
        frames: list[dict[str, Any]] = []
        await frames_until(tab, {"text.delta"}, frames)
        for frame in frames:
            page.see(frame)
    fault()
    for web, page in enumerate(pages):
        tabs[web] = await shown_to_the_end(tier, web, session_id, tabs[web], page)
    reply = stored_reply(tier, session_id)
    assert reply.startswith("Once upon a time")
    for tab, page in zip(tabs, pages, strict=True):
        await tab.close()
        assert (page.reply, page.repeated, page.busy) == (reply, [], False)
    [(status, error, claimed, by)] = runs_of(tier, session_id)
    assert (status, error, claimed) == ("completed", "", 1)
    assert on_a_task_worker(tier, by), by


async def test_a_run_goes_on_through_a_postgres_restart(live_tier):  # noqa: F811
    await across(live_tier, live_tier.postgres.restart)


# The SSE tier has no Redis: its runs meet tabs through PostgreSQL.
@pytest.mark.parametrize("tasks_deployment", ["websocket", "pubsub"], indirect=True)
async def test_a_run_goes_on_through_a_redis_restart(live_tier):  # noqa: F811
    assert live_tier.redis is not None
    await across(live_tier, live_tier.redis.restart)


async def test_a_killed_task_worker_s_run_ends_worker_lost_for_both_tabs(live_tier):  # noqa: F811
    tier, session_id = live_tier, uuid.uuid4().hex
    tabs = [await tab_on(tier, 0, session_id), await tab_on(tier, 1, session_id)]
    await tabs[0].say(STORY)
    for tab in tabs:
        await frames_until(tab, {"text.delta"}, [])
    [(_, _, _, claimed_by)] = runs_of(tier, session_id)
    [victim] = [w for w in tier.tasks if claimed_by.endswith(f":{w.pid}")]
    victim.kill()
    killed = time.monotonic()
    for tab in tabs:
        # The end as ``run.failed``, or (the killed worker's last events lost with it, so
        # the end's seq leaves a gap) as the stored history's note of the failed reply.
        page = Shown()
        while not page.ended:
            page.see(await tab.frame())
        assert page.failure == "worker_lost", vars(page)
        await tab.close()
    print(
        f"MEASURED {tier.transport}: SIGKILL to worker_lost in {time.monotonic() - killed:.1f} s"
        f" (lease {LEASE} s)"
    )
    assert time.monotonic() - killed < 4 * LEASE
    [(status, error, claimed, _)] = runs_of(tier, session_id)
    assert (status, error, claimed) == ("failed", "worker_lost", 1)
