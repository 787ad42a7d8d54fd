"""Token budgets across two daphne workers sharing PostgreSQL (or SQLite) and Redis: 20
people at once each send messages, alternately through a tab on either worker, until
refused. Each message costs one model call of a known size (tests/budget_agent.py)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db.models import Sum
from websockets.asyncio.client import ClientConnection, connect

from django_agent_sessions.models import AgentRun
from tests.budget_agent import CALL_TOKENS
from tests.daphne_workers import Worker, two_workers
from tests.websockets import login_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis, pytest.mark.long(40)]
BUDGET = 250  # the third run starts at 200 and ends at 300: the one run past it
PEOPLE = 20
MOST_MESSAGES = 6


@pytest.fixture
def call_log(tmp_path: Path) -> Path:
    path = tmp_path / "calls.jsonl"
    path.touch()
    return path


@pytest.fixture
def workers(tmp_path: Path, call_log: Path) -> Iterator[list[Worker]]:
    with two_workers(
        tmp_path,
        AGENT_SESSIONS_TEST_AGENT="tests.budget_agent.make_agent",
        AGENT_SESSIONS_TEST_SETTINGS=json.dumps({"QUOTAS": {"TOKENS_PER_DAY": BUDGET}}),
        AGENT_SESSIONS_TEST_CALL_LOG=str(call_log),
        AGENT_SESSIONS_CHANNEL_PREFIX=f"budget-{uuid.uuid4().hex[:8]}:",
    ) as started:
        yield started


async def _tab(worker: Worker, session_id: str, cookie: bytes) -> ClientConnection:
    connection = await connect(
        f"ws://127.0.0.1:{worker.port}/ws/agent-sessions/{session_id}/",
        additional_headers={"Cookie": cookie.decode(), "Origin": worker.url},
        open_timeout=30,
    )
    await _until(connection, "history")
    return connection


async def _until(connection: ClientConnection, *kinds: str) -> dict[str, Any]:
    while True:
        frame = json.loads(await asyncio.wait_for(connection.recv(), 30))
        if frame["type"] in kinds:
            return frame


async def _answer(tab: ClientConnection, client_id: str) -> dict[str, Any]:
    """The end of the run of the message sent as ``client_id``, or its refusal. The tab
    also holds the frames of the other tab's runs (both follow the conversation)."""
    run_id: str | None = None
    seen: list[dict[str, Any]] = []
    while True:
        try:
            frame = json.loads(await asyncio.wait_for(tab.recv(), 30))
        except TimeoutError:
            raise AssertionError(f"no answer to {client_id}: {seen}") from None
        seen.append(frame)
        if frame["type"] == "error" and frame.get("client_id") == client_id:
            return frame
        if frame["type"] == "history":  # the tab caught up from the store (allowed)
            frame, run_id = _from_history(frame, client_id, run_id)
            if frame is not None:
                return frame
            continue
        item = frame.get("item") or {}
        if frame["type"] == "item.completed" and item.get("client_id") == client_id:
            run_id = frame["run_id"]
        ended = frame["type"].startswith("run.") and frame["type"] != "run.started"
        if ended and frame["run_id"] == run_id:
            return frame


def _from_history(
    history: dict[str, Any], client_id: str, run_id: str | None
) -> tuple[dict[str, Any] | None, str | None]:
    """A history frame answers a message whose reply it holds; else the run's events (or
    the next catch-up) are still to come."""
    ours = [item for item in history["items"] if item.get("client_id") == client_id]
    run_id = ours[0]["run_id"] if ours else run_id
    active_run = history.get("active_run") or {}
    if any(item.get("client_id") == client_id for item in active_run.get("items", [])):
        run_id = active_run["run_id"]
    if run_id is not None and active_run.get("run_id") == run_id:
        return None, run_id  # still in progress (its reply may be stored already): its end follows
    replied = any(
        item.get("role") == "assistant" and item.get("run_id") == run_id
        for item in history["items"]
    )
    return ({"type": "run.completed", "history": history} if replied else None), run_id


async def _send_until_refused(workers: list[Worker], person: int, cookie: bytes) -> dict[str, Any]:
    """One person: a tab on each worker; messages go through them in turn."""
    session_id = f"budget-{person}-{uuid.uuid4().hex[:8]}"
    tabs = [await _tab(worker, session_id, cookie) for worker in workers]
    sent: list[str] = []
    try:
        for n in range(MOST_MESSAGES):
            tab, text = tabs[(person + n) % 2], f"person {person} message {n}"
            frame = {"type": "user_message", "text": text, "client_id": f"m{n}"}
            await tab.send(json.dumps(frame))
            sent.append(text)
            end = await _answer(tab, f"m{n}")
            if end["type"] == "error":
                return {"sent": sent, "refusal": end}
            assert end["type"] == "run.completed", json.dumps(end)
        return {"sent": sent, "refusal": None}
    finally:
        for tab in tabs:
            await tab.close()


async def test_twenty_people_at_once_spend_at_most_one_run_past_their_budget(
    workers, call_log, make_user
):
    people = [await sync_to_async(make_user)(f"budget-{n}") for n in range(PEOPLE)]
    cookies = [await sync_to_async(login_cookie)(person) for person in people]
    results = await asyncio.gather(
        *(_send_until_refused(workers, n, cookie) for n, cookie in enumerate(cookies))
    )
    called = [json.loads(line) for line in call_log.read_text().splitlines()]
    for person, result in zip(people, results, strict=True):
        refusal = result["refusal"]
        assert refusal is not None, result["sent"]
        assert refusal["code"] == "quota_exceeded"
        assert refusal["resets_at"]
        spent = await AgentRun.objects.filter(session__owner=person).aaggregate(
            tokens=Sum("total_tokens")
        )
        assert BUDGET <= spent["tokens"] <= BUDGET + CALL_TOKENS, (person.username, spent)
        # Refused before any model call: the refused message never reached the model.
        assert result["sent"][-1] not in called
        assert all(text in called for text in result["sent"][:-1])
    runs = await AgentRun.objects.acount()
    assert len(called) == runs == PEOPLE * 3  # one call per run; none for a refusal
