"""Approvals across two daphne worker processes sharing the database and Redis.

The run asks on worker A; the decisions arrive on worker B, which resumes the run from
the state stored in the database, also after worker A was killed with SIGKILL while the
run waited. The agent is the real SDK Runner on a ScriptedModel (tests/chat_agent.py).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from django_agent_sessions.models import AgentRun, SessionItem, ToolApproval
from tests.daphne_workers import Worker, two_workers
from tests.websockets import login_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis, pytest.mark.long(45)]
AGENT = "tests.chat_agent.make_payment_demo_agent"
REPLY = "Done. call-ann: sent 5 to ann; call-bob: Not Bob."


@pytest.fixture
def workers(tmp_path) -> Iterator[list[Worker]]:
    with two_workers(
        tmp_path,
        AGENT_SESSIONS_TEST_AGENT=AGENT,
        AGENT_SESSIONS_CHANNEL_PREFIX=f"appr-{uuid.uuid4().hex[:8]}:",
    ) as started:
        yield started


class Client:
    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.frames: list[dict[str, Any]] = []

    async def send(self, frame: dict[str, Any]) -> None:
        await self.connection.send(json.dumps(frame))

    async def until(self, kind: str, count: int = 1) -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        while sum(f["type"] == kind for f in seen) < count:
            frame = json.loads(await asyncio.wait_for(self.connection.recv(), 20))
            self.frames.append(frame)
            seen.append(frame)
        return seen


async def _open(worker: Worker, session_id: str, cookie: str) -> tuple[Client, dict[str, Any]]:
    connection = await connect(
        f"ws://127.0.0.1:{worker.port}/ws/agent-sessions/{session_id}/",
        additional_headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{worker.port}"},
        open_timeout=20,
    )
    client = Client(connection)
    history = (await client.until("history"))[-1]
    return client, history


async def _decide_both(client: Client) -> None:
    await client.send({"type": "approval", "call_id": "call-ann", "approve": True})
    await client.send(
        {"type": "approval", "call_id": "call-bob", "approve": False, "message": "Not Bob."}
    )


def _history_once(session_id: str) -> None:
    rows = SessionItem.objects.filter(session__session_id=session_id).order_by("id")
    assert [(r.item_type, r.call_id or r.role) for r in rows] == [
        ("message", "user"),
        ("function_call", "call-ann"),
        ("function_call", "call-bob"),
        ("function_call_output", "call-ann"),
        ("function_call_output", "call-bob"),
        ("message", "assistant"),
    ]
    assert [json.loads(r.payload).get("output") for r in rows][3:5] == ["sent 5 to ann", "Not Bob."]
    run = AgentRun.objects.get(session__session_id=session_id)
    assert run.status == "completed"
    assert run.waited_at is not None
    assert run.state == ""
    decided = {a.call_id: (a.decision, a.decided_by.username) for a in run.approvals.all()}
    assert decided == {"call-ann": ("approved", "alice"), "call-bob": ("rejected", "alice")}


def test_asked_on_one_worker_decided_on_the_other(workers, make_user, session_id):
    cookie = login_cookie(make_user("alice")).decode()
    worker_a, worker_b = workers

    async def scenario() -> None:
        asker, _ = await _open(worker_a, session_id, cookie)
        decider, _ = await _open(worker_b, session_id, cookie)
        await asker.send({"type": "user_message", "text": "pay Ann and Bob"})
        # A tab of the other worker may learn of the requests and of the end from a
        # history frame (its catch-up answered after the run paused or ended).
        for client in (asker, decider):
            await _until_asked(client)
        await _decide_both(decider)
        for client in (asker, decider):
            if await _until_end(client) == "run.completed":
                assert client.frames[-1]["final_output"] == REPLY
        await asker.connection.close()
        await decider.connection.close()

    asyncio.run(scenario())
    _history_once(session_id)


def test_the_asking_worker_is_killed_while_the_run_waits(workers, make_user, session_id):
    cookie = login_cookie(make_user("alice")).decode()
    worker_a, worker_b = workers

    async def ask() -> None:
        asker, _ = await _open(worker_a, session_id, cookie)
        await asker.send({"type": "user_message", "text": "pay Ann and Bob"})
        await asker.until("approval.requested", 2)

    asyncio.run(ask())
    assert ToolApproval.objects.filter(run__session__session_id=session_id).count() == 2
    worker_a.kill()

    async def decide_after_reload() -> None:
        decider, history = await _open(worker_b, session_id, cookie)
        assert [p["call_id"] for p in history["pending_approvals"]] == ["call-ann", "call-bob"]
        await decider.send({"type": "user_message", "text": "pay again"})
        assert (await decider.until("error"))[-1]["code"] == "busy"
        await _decide_both(decider)
        done = (await decider.until("run.completed"))[-1]
        assert done["final_output"] == REPLY
        await decider.connection.close()

    asyncio.run(decide_after_reload())
    _history_once(session_id)


async def _until_asked(client: Client) -> None:
    """The two requests reach a tab of the other worker as events or, when the run
    paused before it answered the tab's catch-up, listed in a history frame."""
    asked = 0
    while asked < 2:
        frame = json.loads(await asyncio.wait_for(client.connection.recv(), 20))
        client.frames.append(frame)
        if frame["type"] == "approval.requested":
            asked += 1
        elif frame["type"] == "history":
            asked = max(asked, len(frame["pending_approvals"]))


async def _until_end(client: Client) -> str:
    """The end of the run as the tab learns it: its terminal event, or, when the layer
    lost it, the stored outcome in a history frame (docs/wire-protocol.md, "Nothing a
    tab follows is lost")."""
    while True:
        frame = json.loads(await asyncio.wait_for(client.connection.recv(), 20))
        client.frames.append(frame)
        if frame["type"] in {"run.completed", "run.cancelled", "run.failed"}:
            return str(frame["type"])
        settled = not frame.get("active_run") and not frame.get("pending_approvals")
        if frame["type"] == "history" and settled:
            return "history"


def _every_call_has_its_output(conversation: str) -> None:
    rows = SessionItem.objects.filter(session__session_id=conversation)
    calls = sorted(rows.filter(item_type="function_call").values_list("call_id", flat=True))
    outputs = rows.filter(item_type="function_call_output").values_list("call_id", flat=True)
    assert calls == ["call-ann", "call-bob"]
    assert sorted(outputs) == calls, conversation


def test_approve_and_stop_at_once_on_two_workers(workers, make_user, session_id, settings):
    """The last decision on one worker and Stop on the other, sent at the same instant,
    round after round: no deadlock, no socket closed with 1011, every tab learns how the
    round ended (completed, or cancelled) as the record stores it, and the history stays
    valid."""
    cookie = login_cookie(make_user("alice")).decode()
    worker_a, worker_b = workers
    rounds = 50 if settings.TEST_DB == "postgres" else 10

    async def one_round(conversation: str) -> list[str]:
        deciding, _ = await _open(worker_a, conversation, cookie)
        stopping, _ = await _open(worker_b, conversation, cookie)
        await deciding.send({"type": "user_message", "text": "pay Ann and Bob"})
        requested = await deciding.until("approval.requested", 2)
        await _until_asked(stopping)
        await deciding.send({"type": "approval", "call_id": "call-bob", "approve": False})
        # (Only the deciding tab waits for it: the layer delivers at most once, and a
        # decision is told once, while every end is sent twice.)
        await deciding.until("approval.resolved")
        await asyncio.gather(
            deciding.send({"type": "approval", "call_id": "call-ann", "approve": True}),
            stopping.send({"type": "cancel", "run_id": requested[-1]["run_id"]}),
        )
        ends = [await _until_end(client) for client in (deciding, stopping)]
        for client in (deciding, stopping):
            await client.connection.close()
            assert client.connection.close_code == 1000, client.connection.close_code
        return ends

    async def scenario() -> list[list[str]]:
        return [await one_round(f"{session_id}-{n}") for n in range(rounds)]

    rounds_ends = asyncio.run(scenario())
    for n, ends in enumerate(rounds_ends):
        conversation = f"{session_id}-{n}"
        _every_call_has_its_output(conversation)
        status = AgentRun.objects.get(session__session_id=conversation).status
        assert status in ("completed", "cancelled"), (n, status)
        # Every tab was told the stored outcome: as its event, or as the stored history.
        assert set(ends) <= {f"run.{status}", "history"}, (n, status, ends)
    for worker in workers:
        assert "deadlock" not in worker.log().lower(), worker.log()
        assert "Traceback" not in worker.log(), worker.log()
