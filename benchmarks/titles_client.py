"""The titles benchmark's client: chats that send a second message the moment their first
reply completes, which is when the app starts titling the conversation.

Each client connects to a new conversation (``titles-r<round>-...``, so that the round's
titles can be counted), waits for its history frame, sends its first message on the
burst's signal, reads until ``run.completed``, sends its second message at once and reads
until that run ends. Both messages' times to first token are measured; the second's is
where titling could be in the way. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from benchmarks.client_result import ClientResult, record_frame
from benchmarks.daphne_worker import Server, open_socket
from benchmarks.load_client import Scenario, _pct


@dataclass
class TwoMessages:
    first: ClientResult = field(default_factory=ClientResult)
    second: ClientResult = field(default_factory=ClientResult)
    titles: int = 0  # conversation.title frames this tab heard


async def _one_message(
    ws: Any, result: ClientResult, text: str, deadline: float, seen: TwoMessages
) -> None:
    started = time.time()
    await ws.send(json.dumps({"type": "user_message", "text": text}))
    while True:
        left = deadline - time.monotonic()
        frame = json.loads(await asyncio.wait_for(ws.recv(), max(0.01, left)))
        if frame.get("type") == "conversation.title":
            seen.titles += 1
            continue
        if record_frame(result, frame, started):
            return


async def two_messages(
    server: Server, cookie: str, prefix: str, text: str, go: asyncio.Event, timeout: float
) -> TwoMessages:
    """One client's conversation: see the module."""
    seen = TwoMessages()
    current = seen.first
    try:
        async with open_socket(server, cookie, f"{prefix}{uuid.uuid4().hex[:12]}") as ws:
            current.stage = "waiting for the history frame"
            first = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if first.get("type") != "history":
                current.error = f"first frame was {first.get('type')}"
                return seen
            await go.wait()
            deadline = time.monotonic() + timeout
            current.stage = "reading the first run"
            await _one_message(ws, current, text, deadline, seen)
            if not current.completed:
                return seen
            current = seen.second
            current.stage = "reading the second run"
            await _one_message(ws, current, text, deadline + timeout, seen)
    except (TimeoutError, asyncio.TimeoutError):
        pass  # hung: not completed, no error frame
    except Exception as error:  # a benchmark reports failures instead of dying on them
        current.error = f"{type(error).__name__}: {error}"
    return seen


def _summary(results: list[ClientResult]) -> dict[str, Any]:
    ttfts = [r.ttft for r in results if r.ttft is not None]
    return {
        "ttft_p50_ms": _pct(ttfts, 0.5),
        "ttft_p99_ms": _pct(ttfts, 0.99),
        "completed": sum(r.completed for r in results),
        "errors": sorted({r.error for r in results if r.error})[:5],
    }


async def burst(server: Server, cookies: list[str], s: Scenario, prefix: str) -> dict[str, Any]:
    """``s.clients`` conversations of two messages each, the first ones sent at once."""
    text = f"bench tokens={s.tokens} delay_ms={s.delay_ms} pad={s.pad}"
    timeout = 30 + s.tokens * s.delay_ms / 1000 * 3
    go = asyncio.Event()
    clients = [
        asyncio.create_task(
            two_messages(server, cookies[i % len(cookies)], prefix, text, go, timeout)
        )
        for i in range(s.clients)
    ]
    await asyncio.sleep(0.5)  # let every socket connect and get its history first
    started = time.perf_counter()
    go.set()
    results = await asyncio.gather(*clients)
    return {
        "scenario": s.name,
        "clients": s.clients,
        "first": _summary([r.first for r in results]),
        "second": _summary([r.second for r in results]),
        "title_frames": sum(r.titles for r in results),
        "seconds": round(time.perf_counter() - started, 2),
    }
