"""What one chat client saw of its run: the first token's delay, each token's latency
(the paced model stamps every token with its send time), frames, and how it ended."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ClientResult:
    ttft: float | None = None
    latencies: list[float] = field(default_factory=list)
    frames: int = 0
    completed: bool = False
    error: str | None = None
    stage: str = "connecting"  # where a hung client was stuck
    last_frame: str = ""


def record_frame(result: ClientResult, frame: dict[str, Any], started: float) -> bool:
    """Count a frame of the run into ``result``; True once the run is over."""
    now = time.time()
    result.frames += 1
    kind = frame.get("type")
    result.last_frame = str(kind)
    if kind == "text.delta":
        if result.ttft is None:
            result.ttft = now - started
        result.latencies += [
            now - float(token[1:].rstrip("x"))
            for token in frame["delta"].split()
            if token[:1] == "@"
        ]
    elif kind == "run.completed":
        result.completed = True
        return True
    elif kind in ("run.failed", "run.cancelled", "error"):
        result.error = f"{kind}: {frame.get('error') or frame.get('code')}"
        return True
    return False
