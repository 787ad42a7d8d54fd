"""Compaction on DjangoSession: the SDK's ``OpenAIResponsesCompactionSession`` around it.

DjangoSession implements the SDK's private compaction hook (``_get_compaction_snapshot``).
The first test fails loudly if the pinned SDK stops calling it, so that an upgrade
cannot silently fall back to ``clear_session()`` + ``add_items()``. The process tests
run compaction while other processes append, and check that every appended message is
still stored or was summarised by a stored compaction; a control shows the same
checker catching the SDK's generic clear-then-add path.
"""

from __future__ import annotations

import json
import socket
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import AsyncMock

import pytest
from agents import Agent, Runner
from agents.memory import OpenAIResponsesCompactionSession
from agents.testing import ScriptedModel, assistant_message

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession, SessionItem
from tests import warm_start
from tests.compaction_worker import summarised
from tests.conftest import user_message
from tests.processes import REPO_ROOT, worker_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.long(35)]

SUMMARY = {"type": "compaction", "id": "cmp-1", "encrypted_content": "synthetic"}


def compacting(store: Any, **kwargs: Any) -> tuple[OpenAIResponsesCompactionSession, Any]:
    client = SimpleNamespace(responses=SimpleNamespace(compact=AsyncMock()))
    client.responses.compact.return_value = SimpleNamespace(output=[SUMMARY], usage=None)
    kwargs.setdefault("should_trigger_compaction", lambda context: True)
    session = OpenAIResponsesCompactionSession(
        store.session_id,
        store,
        client=client,  # type: ignore[arg-type]  # only responses.compact is used
        **kwargs,
    )
    return session, client.responses.compact


def agent(*replies: str) -> Agent:
    return Agent(name="a", model=ScriptedModel([[assistant_message(r)] for r in replies]))


async def test_the_sdk_calls_the_snapshot_hook(make_session, monkeypatch):
    """If this fails after an SDK upgrade, compaction no longer uses DjangoSession's
    atomic suffix replacement: re-check the hook before widening the pin."""
    store = make_session(session_settings={"limit": 20})
    await store.add_items([user_message(f"old {i}") for i in range(30)])
    calls = []
    original = DjangoSession._get_compaction_snapshot

    async def spy(self: DjangoSession, limit: int, **kwargs: Any) -> Any:
        calls.append(limit)
        return await original(self, limit, **kwargs)

    monkeypatch.setattr(DjangoSession, "_get_compaction_snapshot", spy)
    cleared = AsyncMock(side_effect=AssertionError("compaction fell back to clear_session()"))
    monkeypatch.setattr(store, "clear_session", cleared)
    session, compact = compacting(store)
    await Runner.run(agent("done"), "new question", session=session)
    assert calls, "OpenAIResponsesCompactionSession did not call _get_compaction_snapshot"
    compact.assert_awaited_once()
    stored = await store.get_items()
    # The 30 older items are outside the model's window (limit 20) and stay; the
    # suffix from the first user message of this exchange is replaced.
    assert stored[-1] == SUMMARY
    assert [i["content"] for i in stored[:-1]] == [f"old {i}" for i in range(len(stored) - 1)]


async def test_compacts_under_a_session_limit(make_session):
    store = make_session(session_settings={"limit": 20})
    await store.add_items([user_message(f"old {i}") for i in range(25)])
    session, compact = compacting(store)
    await Runner.run(agent("done"), "question", session=session)
    compact.assert_awaited_once()
    sent = compact.await_args.kwargs["input"]
    assert len(sent) <= 22  # a bounded suffix, never the whole conversation
    assert (await store.get_items())[-1] == SUMMARY


async def test_a_write_during_the_request_cancels_the_replacement(make_session):
    store = make_session()
    await store.add_items([user_message("before")])
    other = DjangoSession(store.session_id)  # another worker's instance
    session, compact = compacting(store)

    async def slow_compact(**kwargs: Any) -> Any:
        await other.add_items([user_message("meanwhile")])
        return SimpleNamespace(output=[SUMMARY], usage=None)

    compact.side_effect = slow_compact
    await Runner.run(agent("answer"), "question", session=session)
    compact.assert_awaited_once()
    contents = [item.get("content") for item in await store.get_items()]
    assert "meanwhile" in contents
    assert SUMMARY not in await store.get_items()  # replacement refused, nothing lost


async def test_unreadable_rows_are_kept(make_session):
    store = make_session()
    await store.add_items([user_message("first")])
    await _insert_raw(store.session_id, "not json {")
    session, compact = compacting(store)
    await Runner.run(agent("answer"), "question", session=session)
    compact.assert_awaited_once()
    payloads = await _payloads(store.session_id)
    assert "not json {" in payloads
    assert json.loads(payloads[-1]) == SUMMARY


async def test_item_count_follows_the_replacement(make_session):
    store = make_session()
    await store.add_items([user_message(f"m {i}") for i in range(5)])
    session, _ = compacting(store)
    await Runner.run(agent("answer"), "question", session=session)
    stored = await store.get_items()
    row = await AgentSession.objects.aget(session_id=store.session_id)
    assert row.item_count == len(stored)


async def _insert_raw(session_id: str, payload: str) -> None:
    row = await AgentSession.objects.aget(session_id=session_id)
    await SessionItem.objects.acreate(session=row, payload=payload)


async def _payloads(session_id: str) -> list[str]:
    return [
        p
        async for p in SessionItem.objects.filter(session__session_id=session_id)
        .order_by("id")
        .values_list("payload", flat=True)
    ]


# --- several processes: compaction while others append -----------------------------

APPENDERS = 3
SECONDS = 6.0


def run_processes(session_id: str, hook: str) -> tuple[list[Any], dict[str, Any]]:
    roles = [("append", f"p{i}") for i in range(APPENDERS)] + [("compact", hook)]
    with tempfile.TemporaryDirectory(prefix="compaction-") as directory:
        talks = [socket.socketpair() for _ in roles]  # (ours, the process's stdin and stdout)
        started = [
            warm_start.start(
                ["-m", "tests.compaction_worker", role, session_id, str(SECONDS), last],
                env=worker_env(),
                cwd=REPO_ROOT,
                errors=Path(directory) / f"{n}.err",
                talk=theirs,
            )
            for n, ((role, last), (_, theirs)) in enumerate(zip(roles, talks, strict=True))
        ]
        lines = []
        for n, (ours, theirs) in enumerate(talks):
            theirs.close()
            ours.settimeout(120)
            lines.append(ours.makefile("rw"))
            assert lines[n].readline().strip() == "ready", _errors(directory, n)
        for line in lines:  # all imported: start them together
            line.write("go\n")
            line.flush()  # a socket's file holds what is written until flushed
        outputs = []
        for n, (process, line) in enumerate(zip(started, lines, strict=True)):
            outputs.append(json.loads(line.readline()))
            assert process.wait(timeout=120) == 0, _errors(directory, n)
        for ours, _ in talks:
            ours.close()
    appended = [entry for output in outputs[:-1] for entry in output]
    return appended, outputs[-1]


def _errors(directory: str, n: int) -> str:
    path = Path(directory) / f"{n}.err"
    return path.read_text() if path.exists() else ""


def missing(appended: list[Any], stored: list[Any]) -> list[str]:
    """Appended messages neither stored nor summarised by a stored compaction."""
    covered = set(summarised(stored))
    return sorted(text for text, _ in appended if text not in covered)


def overlapping(appended: list[Any], compactor: dict[str, Any]) -> int:
    """How many appends happened while compaction requests were being made."""
    return sum(compactor["first"] <= at <= compactor["last"] for _, at in appended)


def test_compaction_while_other_processes_append(session_id):
    appended, compactor = run_processes(session_id, hook="on")
    stored = _stored(session_id)
    assert compactor["requests"] >= 2
    assert overlapping(appended, compactor) > 0
    assert any(item.get("type") == "compaction" for item in stored), "nothing was compacted"
    assert missing(appended, stored) == []


def test_control_the_checker_catches_clear_then_add(session_id):
    appended, compactor = run_processes(session_id, hook="off")
    stored = _stored(session_id)
    assert compactor["requests"] >= 1
    assert missing(appended, stored) != []


def _stored(session_id: str) -> list[Any]:
    return [
        json.loads(p)
        for p in SessionItem.objects.filter(session__session_id=session_id)
        .order_by("id")
        .values_list("payload", flat=True)
    ]
