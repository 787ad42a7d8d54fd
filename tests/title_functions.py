"""Title functions for ``AGENT_SESSIONS["TITLES"] = {"FUNCTION": ...}`` in tests: one that
waits for a test's gate (to rename while a title is being written), one that fails."""

from __future__ import annotations

import asyncio
from typing import Any

calls: list[tuple[str, str]] = []
gate: asyncio.Event | None = None
entered = asyncio.Event()  # set when gated() is called (a test makes one in its loop)


async def gated(message: str, reply: str) -> str:
    calls.append((message, reply))
    entered.set()
    if gate is not None:
        await gate.wait()
    return f'"About {message}."'


def failing(message: str, reply: str) -> Any:
    calls.append((message, reply))
    raise RuntimeError("the title function broke")


def reset() -> None:
    global gate
    calls.clear()
    gate = None


not_callable = 42
