"""The AI SDK's own Node client (``ai``'s ``DefaultChatTransport`` and
``readUIMessageStream``) against a live server: the reply streams in, its tool call
and output show, the history loads back as exactly the messages the client built, and
a resume with nothing in flight is nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync

from tests.conversations import run_statuses
from tests.daphne_workers import Worker
from tests.protocols.ai_sdk.live import CSRF, cookie_of, esbuild

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.once, pytest.mark.long(10)]


def drive(program: Path, server: Worker, cookie: str, chat_id: str) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(program), server.url, cookie, CSRF, chat_id],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr + server.log()
    return dict(json.loads(done.stdout))


def test_use_chat_s_transport_streams_a_reply_that_loads_back_exactly(
    chat_server: Worker, make_user: Any, session_id: str, tmp_path: Path
) -> None:
    program = esbuild("drive.mjs", tmp_path, platform="node")
    cookie = cookie_of(make_user("ann"))
    seen = drive(program, chat_server, cookie, session_id)
    _asked, answer = seen["streamed"]
    assert answer["role"] == "assistant"
    tool = next(part for part in answer["parts"] if part["type"] == "tool-get_weather")
    assert (tool["state"], tool["input"], tool["output"]) == (
        "output-available",
        {"city": "Paris"},
        "sunny in Paris",
    )
    final = "The forecast says sunny in Paris."
    assert seen["texts"][-1] == final
    # Incremental: the client saw the text grow, a piece at a time.
    growing = [text for text in dict.fromkeys(seen["texts"]) if text]
    assert len(growing) > 1
    assert all(final.startswith(text) for text in growing)
    assert seen["loaded"] == seen["streamed"]  # the round trip is exact
    assert seen["resumed"] is None  # nothing in flight: 204
    assert async_to_sync(run_statuses)(session_id) == ["completed"]
