"""The one vocabulary for SDK input items: what an item is, and the plain text it holds.

``describe(item)`` classifies a stored item (an SDK ``TResponseInputItem`` dict) once.
Everything that shows items only formats the resulting ``ItemView``: the browsing
columns of ``SessionItem`` (``serialization``), the chat's display items
(``websocket.wire``) and the admin transcript (``admin.transcript``). Nothing here is
HTML: every string is plain text, to be escaped by whoever shows it.

Kinds:

- ``message``: ``role`` and ``text`` (text parts joined; images and files as
  ``[image]``/``[file: name]``)
- ``tool_call`` (any ``*_call`` type): ``call_id``, ``name`` (the type for hosted tools)
  and ``arguments`` (the JSON text the model wrote, or a hosted tool's action as JSON)
- ``tool_output``: ``call_id`` and ``text`` (the output as text)
- ``reasoning``: ``text`` (the summary, often empty)
- ``other``: an item type a page may ignore (``type`` says which)

Handoffs are tool calls whose name starts with ``transfer_to_`` (the SDK's default);
a live run also reports them as ``handoff`` events, which ``websocket.wire`` shows.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol, TypeGuard, TypeVar

OUTPUT_SUFFIX = "_output"
HANDOFF_PREFIX = "transfer_to_"
_CALL_META = frozenset({"type", "id", "status", "call_id"})


class ItemView(NamedTuple):
    """One item, classified. Every field is plain text ("" when it does not apply).

    A named tuple: one is built for every item written or shown, and a frozen dataclass
    was three times slower to build (each field set through ``object.__setattr__``).
    """

    kind: str
    type: str
    role: str = ""
    text: str = ""
    call_id: str = ""
    name: str = ""
    arguments: str = ""

    @property
    def is_handoff(self) -> bool:
        return self.kind == "tool_call" and self.name.startswith(HANDOFF_PREFIX)


def item_type(item: Mapping[str, Any]) -> str:
    """The item's ``type``; the SDK's easy input messages omit it and mean ``message``."""
    value = item.get("type")
    if isinstance(value, str) and value:
        return value
    return "message" if "role" in item else "unknown"


def describe(item: Mapping[str, Any]) -> ItemView:
    """Classify one stored item."""
    kind = item_type(item)
    if kind == "message":
        return ItemView("message", kind, role=text_field(item, "role"), text=content_text(item))
    if kind.endswith("_call"):
        return ItemView(
            "tool_call",
            kind,
            call_id=text_field(item, "call_id"),
            name=text_field(item, "name") or kind,
            arguments=_arguments(item),
        )
    if is_call_output(item):
        return ItemView(
            "tool_output", kind, call_id=text_field(item, "call_id"), text=_output(item)
        )
    if kind == "reasoning":
        return ItemView("reasoning", kind, text=_reasoning(item))
    return ItemView("other", kind, name=text_field(item, "name"))


def is_user_message(item: Any) -> bool:
    """A message the user wrote: where a turn starts."""
    return isinstance(item, Mapping) and item.get("role") == "user"


def is_call_output(item: Mapping[str, Any]) -> bool:
    """A tool's output that answers a call (it has the call's ``call_id``)."""
    kind = item.get("type")
    return (
        isinstance(kind, str) and kind.endswith(OUTPUT_SUFFIX) and bool(text_field(item, "call_id"))
    )


def content_text(item: Mapping[str, Any]) -> str:
    """The plain text of a message's content (input or output content parts).

    Text parts are joined as they are, so an assistant message's text equals its
    streamed deltas; other parts become ``[image]``/``[file: name]`` on lines of their own.
    """
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return _parts_text(content)


def typed_text(item: Mapping[str, Any]) -> str:
    """Only what was typed of a message: its text parts, without placeholders for files."""
    content = item.get("content")
    if not isinstance(content, list):
        return content_text(item)
    texts = [part.get("text") for part in content if isinstance(part, Mapping)]
    return "".join(text for text in texts if isinstance(text, str))


def search_text(item: Mapping[str, Any], tool_outputs: bool = False) -> str:
    """What search finds in an item: the text of a user's or the assistant's message
    (and, with ``tool_outputs``, a tool's output); "" for everything else."""
    role = item.get("role")
    if (role == "user" or role == "assistant") and item_type(item) == "message":
        return typed_text(item)
    if tool_outputs and is_call_output(item):
        return _output(item)
    return ""


def text_field(item: Mapping[str, Any], key: str) -> str:
    value = item.get(key)
    return value if isinstance(value, str) else ""


def _parts_text(parts: list[Any]) -> str:
    texts: list[str] = []
    placeholders = False
    for part in parts:
        if type(part) is not dict and not isinstance(part, Mapping):  # type() first: ABCs are slow
            continue
        text = part.get("text", part.get("refusal"))
        if isinstance(text, str):
            texts.append(text)
        else:
            placeholders = True
            texts.append(_placeholder(part))
    return "\n".join(texts) if placeholders else "".join(texts)


def _placeholder(part: Mapping[str, Any]) -> str:
    kind = text_field(part, "type")
    if kind == "input_image":
        return "[image]"
    if kind == "input_file":
        return f"[file: {text_field(part, 'filename') or 'unnamed'}]"
    return f"[{kind or 'content'}]"


def _reasoning(item: Mapping[str, Any]) -> str:
    summary = item.get("summary")
    if not isinstance(summary, list):
        return ""
    return "\n\n".join(text_field(part, "text") for part in summary if isinstance(part, Mapping))


def _arguments(item: Mapping[str, Any]) -> str:
    for key in ("arguments", "input"):
        if isinstance(item.get(key), str):
            return str(item[key])
    # Hosted tools (computer, shell, ...) carry an action instead of arguments.
    details = {k: v for k, v in item.items() if k not in _CALL_META}
    return json.dumps(details, ensure_ascii=False) if details else ""


def _output(item: Mapping[str, Any]) -> str:
    output = item.get("output")
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return _parts_text(output)
    return json.dumps(output, ensure_ascii=False)


def drop_orphan_outputs(items: list[Any]) -> list[Any]:
    """Remove tool outputs whose call is not among ``items``.

    A ``limit`` window can start between a tool call and its output. The model API
    rejects an output without its call, and a person paging history cannot read it, so
    a limited read leaves such outputs out (it may then return fewer than ``limit``).
    Every limited read runs this, so it makes one pass and copies nothing when the
    window holds no orphan (measured: a third of a 20-item read's Python time before).
    """
    call_ids: set[Any] = set()
    output_call_ids: list[str] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind, call_id = item.get("type"), item.get("call_id")
        if isinstance(kind, str) and kind.endswith(OUTPUT_SUFFIX) and _is_id(call_id):
            output_call_ids.append(call_id)
        else:
            call_ids.add(call_id)
    if call_ids.issuperset(output_call_ids):
        return items
    return [
        item
        for item in items
        if not (isinstance(item, Mapping) and is_call_output(item))
        or item.get("call_id") in call_ids
    ]


# Tool calls answered by an item of their own (``<type>_output``); hosted tools' calls
# (web search, file search, ...) are complete as they are.
CALLS_WITH_OUTPUTS = frozenset(
    {"function_call", "custom_tool_call", "computer_call", "local_shell_call", "shell_call",
     "apply_patch_call"}
)  # fmt: skip


def drop_unanswered_calls(items: list[Any]) -> list[Any]:
    """Remove the tool calls whose output is not among ``items``, and the reasoning that
    led only to them: a history cut after a call, or a run waiting for an approval, would
    give the model a call without its output, or a reasoning item without the item that
    followed it (``[user, reasoning, call]`` left as ``[user, reasoning]``), both of which
    the model API rejects."""
    answered = {
        item.get("call_id") for item in items if isinstance(item, Mapping) and is_call_output(item)
    }
    kept: list[Any] = []
    reasoning: list[Any] = []  # waiting for the item that followed it
    dropped = False  # a call dropped since the waiting reasoning
    for item in items:
        kind = item.get("type") if isinstance(item, Mapping) else None
        if kind == "reasoning":
            reasoning.append(item)
        elif kind in CALLS_WITH_OUTPUTS and item.get("call_id") not in answered:
            dropped = True
        else:
            # After a dropped call, only another call of the same response keeps it.
            if not dropped or (isinstance(kind, str) and kind.endswith("_call")):
                kept += reasoning
            kept.append(item)
            reasoning, dropped = [], False
    return kept  # reasoning that ends the items had its following item cut off


def _is_id(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value)


class RunSpan(Protocol):
    """A run as its note's place needs it (``AgentRun`` or ``store.conversations.RunNote``)."""

    @property
    def history_item_id(self) -> int: ...  # the run's items come after this id ...

    @property
    def last_item_id(self) -> int: ...  # ... up to this one


_Run = TypeVar("_Run", bound=RunSpan)


def notes_to_show(item_ids: list[int], runs: list[_Run]) -> list[_Run]:
    """Which of the stopped or failed ``runs`` keep their note beside these items (ids
    ascending), ordered by the item each note follows (a run's ``last_item_id``).

    A run's note (the reply it had streamed) follows its items. When none of them is
    stored any more (an edit or a regenerate took the turn back, or the conversation was
    cleared), the note goes too: it answered a message that no longer exists. A run that
    stored nothing at all keeps its note after the item it followed.
    """
    kept = [run for run in runs if _turn_kept(run, item_ids)]
    return sorted(kept, key=lambda run: run.last_item_id)


def _turn_kept(run: RunSpan, item_ids: list[int]) -> bool:
    """``item_ids`` ascending (history order): one bisection per run."""
    if run.last_item_id <= run.history_item_id:
        return True
    first_after = bisect.bisect_right(item_ids, run.history_item_id)
    return first_after < len(item_ids) and item_ids[first_after] <= run.last_item_id
