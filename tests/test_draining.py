"""``Draining`` (``draining.py``) in-process: the lifespan answered, its shutdown waiting
for the drain, other scopes passed on, and SIGTERM drained before it is handed over.
``tests/streaming/running/test_drain_live.py`` does it in uvicorn and daphne."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from django_agent_sessions import Draining
from django_agent_sessions.streaming import drain


@pytest.fixture
def drains(monkeypatch) -> Iterator[list[str]]:
    """What happened, in order; SIGTERM's handler put back after the test."""
    happened: list[str] = []

    async def fake_drain() -> None:
        await asyncio.sleep(0.01)
        happened.append("drained")

    monkeypatch.setattr(drain, "drain", fake_drain)
    previous = signal.getsignal(signal.SIGTERM)
    yield happened
    signal.signal(signal.SIGTERM, previous)


async def test_the_lifespan_is_answered_and_its_shutdown_waits_for_the_drain(drains):
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])

    app = Draining(lambda *args: pytest.fail("the application is not called for lifespan"))
    task = asyncio.ensure_future(app({"type": "lifespan"}, inbox.get, send))
    await inbox.put({"type": "lifespan.startup"})
    await inbox.put({"type": "lifespan.shutdown"})
    await asyncio.wait_for(task, 5)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert drains == ["drained"]


async def test_other_scopes_reach_the_application_and_sigterm_is_drained_then_handed_over(
    drains,
):
    handed_over = asyncio.Event()

    def previous(signum: int, frame: Any) -> None:
        drains.append(f"handed over {signal.Signals(signum).name}")
        handed_over.set()

    signal.signal(signal.SIGTERM, previous)
    seen: list[str] = []

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    app = Draining(application)
    await app({"type": "http"}, None, None)
    assert seen == ["http"]
    assert signal.getsignal(signal.SIGTERM) is not previous  # taken from its first request
    signal.raise_signal(signal.SIGTERM)
    await asyncio.wait_for(handed_over.wait(), 5)
    assert drains == ["drained", "handed over SIGTERM"]
