"""What a chat page shows of a conversation's latest run, folded from the frames it gets.

The same rules as the page's ``chat.js``: a ``history`` frame replaces everything (its
items, then the run in flight: its items and its text so far), deltas append to the reply
being written, a completed message replaces it, and an end (or a history without a run
in flight) ends the run. ``failure`` is the error code of a run shown failed: from its
``run.failed``, or from the history's note of it (a tab whose end the layer lost learns
it from the stored history). ``repeated`` records each completed message whose streamed text
(if any was streamed) differed from it: text shown twice, or lost.
"""

from __future__ import annotations

from typing import Any

TERMINAL = {"run.completed", "run.cancelled", "run.failed"}


class Shown:
    """What a chat page shows of one run, folded from the frames it gets (as chat.js)."""

    def __init__(self) -> None:
        self.reply = ""
        self.streaming = ""
        self.busy = False
        self.ended = False
        self.failure: str | None = None
        self.repeated: list[tuple[str, str]] = []

    def see(self, frame: dict[str, Any]) -> None:
        kind = frame["type"]
        if kind == "history":
            replies = [i["text"] for i in frame["items"] if _is_reply(i)]
            active = frame["active_run"]
            replies += [i["text"] for i in (active or {}).get("items", []) if _is_reply(i)]
            self.reply = replies[-1] if replies else ""
            self.streaming = (active or {}).get("text", "")
            self.busy = active is not None or bool(frame["pending_approvals"])
            self.ended = self.ended or (not self.busy and bool(replies))
            notes = [i for i in frame["items"] if _is_reply(i) and i.get("status") == "failed"]
            if not self.busy and notes and frame["items"][-1] is notes[-1]:
                self.ended, self.failure = True, notes[-1]["error"]["code"]
        elif kind == "run.started":
            self.busy, self.streaming = True, ""
        elif kind == "text.delta":
            self.streaming += frame["delta"]
        elif kind == "item.completed" and _is_reply(frame["item"]):
            # Nothing streamed: a catch-up's rebuilt item, shown whole (as chat.js does).
            if self.streaming and self.streaming != frame["item"]["text"]:
                self.repeated.append((self.streaming, frame["item"]["text"]))
            self.reply, self.streaming = frame["item"]["text"], ""
        elif kind in TERMINAL:
            self.busy, self.ended = False, True
            if kind == "run.failed":
                self.failure = frame["error"]["code"]


def _is_reply(item: dict[str, Any]) -> bool:
    return item.get("kind") == "message" and item.get("role") == "assistant"
