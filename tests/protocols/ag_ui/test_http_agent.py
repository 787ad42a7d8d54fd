"""AG-UI's own client against a live server: ``@ag-ui/client``'s ``HttpAgent`` in Node,
on a live server (``live.py``).

A streamed reply arrives in pieces, over time; a tool call and its result arrive and
land in the client's messages; ``abortRun()`` stops the run, whose stored history stays
valid; another user's client gets nothing of the thread; the docs' client block runs.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest

from django_agent_sessions import DjangoSession
from tests.conversations import run_statuses
from tests.daphne_workers import Worker
from tests.live_clients import LiveSseTab
from tests.processes import REPO_ROOT
from tests.protocols.ag_ui import live

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.once]

CLIENT = live.CLIENT_DIR / "agent.mjs"


async def _client(server: Worker, cookie: str, *steps: dict[str, Any]) -> dict[str, Any]:
    """Runs the plan's steps in one Node process; each step's outcome by name."""
    plan = {
        "url": f"{server.url}/ag-ui/",
        "cookie": cookie,
        "csrf": live.CSRF,
        "steps": list(steps),
    }
    process = await asyncio.create_subprocess_exec(
        "node",
        str(CLIENT),
        str(live.MODULES),
        json.dumps(plan),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode() + server.log()
    return {step["name"]: step for step in map(json.loads, out.decode().splitlines())}


def _types(step: dict[str, Any]) -> list[str]:
    return [event["type"] for event in step["events"]]


async def test_a_reply_and_a_tool_call_arrive_as_the_client_expects(
    server, alice_cookie, session_id
):
    done = await _client(
        server,
        live.cookie(alice_cookie),
        {"name": "weather", "thread": session_id, "text": "weather?"},
        {"name": "reopened", "thread": session_id},
    )
    weather = done["weather"]
    assert weather["error"] is None
    assert _types(weather)[:5] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ]
    assert _types(weather)[-1] == "RUN_FINISHED"
    # The reply streamed (11 tokens, 10 ms apart): in pieces, the last well after the first.
    contents = [e["at"] for e in weather["events"] if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert len(contents) >= 3
    assert contents[-1] - contents[0] >= 30
    user, call, output, reply = weather["messages"]
    assert (user["role"], user["content"]) == ("user", "weather?")
    assert call["toolCalls"][0]["function"]["name"] == "get_weather"
    assert (output["role"], output["content"]) == ("tool", "sunny in Paris")
    assert reply["content"] == "The forecast says sunny in Paris."
    # Opened again, the thread is what is stored: the same messages, the same text.
    reopened = done["reopened"]
    assert _types(reopened) == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert [m["role"] for m in reopened["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert reopened["messages"][0]["id"] == user["id"]
    assert reopened["messages"][3]["content"] == reply["content"]


async def test_abort_stops_the_run_and_another_user_gets_nothing(
    server, alice_cookie, bob_cookie, session_id
):
    alice = live.cookie(alice_cookie)
    watcher = await LiveSseTab(server.port, session_id, alice).open()
    assert (await watcher.frame())["type"] == "history"
    done = await _client(
        server, alice, {"name": "stop", "thread": session_id, "text": "long", "abort": True}
    )
    stop = done["stop"]
    assert "TEXT_MESSAGE_CONTENT" in _types(stop)
    assert "RUN_FINISHED" not in _types(stop)
    frames = []
    while not frames or frames[-1]["type"] not in ("run.cancelled", "run.completed"):
        frames.append(await watcher.frame())
    assert frames[-1]["type"] == "run.cancelled"
    await watcher.close()
    assert await run_statuses(session_id) == ["cancelled"]
    items = await DjangoSession(session_id).get_items()
    assert [i.get("role") for i in items] == ["user"]  # nothing half-written

    bob = await _client(
        server,
        live.cookie(bob_cookie),
        {"name": "send", "thread": session_id, "text": "hello?"},
        {"name": "open", "thread": session_id},
    )
    for step in bob.values():
        assert step["events"] == []
        assert step["error"]["status"] == 403
        assert "long" not in json.dumps(step)
    assert await run_statuses(session_id) == ["cancelled"]


async def test_the_docs_client_block_runs_as_written(server, alice_cookie, session_id):
    doc = REPO_ROOT / "docs" / "protocols" / "ag-ui.md"
    args = [
        str(live.MODULES),
        str(doc),
        server.url,
        live.cookie(alice_cookie),
        live.CSRF,
        session_id,
    ]
    process = await asyncio.create_subprocess_exec(
        "node",
        str(CLIENT.with_name("snippet.mjs")),
        *args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode() + server.log()
    # The demo agent calls its tool for "weather", then writes the forecast.
    assert json.loads(out) == {"reply": "The forecast says sunny in Paris."}
    assert await run_statuses(session_id) == ["completed"]
