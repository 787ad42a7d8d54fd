"""Turning SDK input items into their stored form and back. No database access here.

Items are stored as JSON *text*, not as a JSON column: PostgreSQL's ``jsonb`` reorders
object keys and rejects strings containing ``\\u0000``, and every JSON column type loses
the difference between ``1.0`` and ``1`` on some backend. Text round-trips exactly on
every database Django supports.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, TypeGuard

logger = logging.getLogger(__name__)

PREVIEW_CHARS = 200
_OUTPUT_SUFFIX = "_output"


class EncodedItem(NamedTuple):
    """One item ready to insert: its JSON text and the columns used for browsing.

    A named tuple: a batch builds one per item, and it is cheaper than a frozen dataclass.
    Its fields are in the order of the item table's columns, which ``storage`` relies on.
    """

    payload: str
    item_type: str
    role: str
    call_id: str
    preview: str


def encode_items(items: list[Any], *, max_bytes: int | None, max_depth: int) -> list[EncodedItem]:
    """Validate and encode a whole batch, or raise before anything is stored."""
    if not isinstance(items, list | tuple):
        raise TypeError(f"add_items() takes a list of items, not {type(items).__name__}")
    return [
        encode_item(item, index=index, max_bytes=max_bytes, max_depth=max_depth)
        for index, item in enumerate(items)
    ]


def encode_item(item: Any, *, index: int, max_bytes: int | None, max_depth: int) -> EncodedItem:
    """Encode one item; errors name its position in the batch and the problem."""
    if not isinstance(item, Mapping):
        raise TypeError(f"item {index}: an item must be a dict, not {type(item).__name__}")
    check_json_value(item, where=f"item {index}", max_depth=max_depth)
    payload = dumps(item)
    if max_bytes is not None:
        size = len(payload) if payload.isascii() else len(payload.encode("utf-8"))
        if size > max_bytes:
            raise ValueError(
                f"item {index}: {size} bytes of JSON exceeds "
                f"AGENT_SESSIONS['MAX_ITEM_BYTES'] ({max_bytes})"
            )
    return EncodedItem(
        payload=payload,
        item_type=column_text(item_type(item), 64),
        role=column_text(_str_field(item, "role"), 32),
        call_id=column_text(_str_field(item, "call_id"), 255),
        preview=preview(item),
    )


def column_text(text: str, max_length: int) -> str:
    """``text`` made safe for a browsing column: PostgreSQL text rejects NUL, and no
    database stores a lone surrogate. The exact value is always in the payload."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    if not text.isascii():  # only non-ASCII text can hold a lone surrogate
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text[:max_length]


def check_json_value(value: Any, *, where: str, max_depth: int) -> None:
    """Raise if ``value`` would not come back from storage exactly as it went in.

    Walks iteratively, so a hostile, deeply nested item cannot exhaust the stack. The
    walk that every item takes builds no paths; only a value that fails is walked
    again to name where the problem is (measured: building a path string for every
    node was most of the cost of validating a small item).
    """
    if not _is_exact_json(value, max_depth):
        _raise_first_problem(value, where=where, max_depth=max_depth)


def _is_exact_json(value: Any, max_depth: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        kind = type(node)
        if kind is str or kind is int or kind is bool or node is None:
            continue
        if kind is float:
            if not math.isfinite(node):
                return False
            continue
        if depth > max_depth:
            return False
        if kind is dict:
            for key, child in node.items():
                if type(key) is not str:
                    return False
                push((child, depth + 1))
        elif kind is list:
            for child in node:
                push((child, depth + 1))
        else:
            # Subclasses (str enums, OrderedDict, tuples, ...) take the careful walk.
            return False
    return True


def _raise_first_problem(value: Any, *, where: str, max_depth: int) -> None:
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, str | bool | int) or node is None:
            continue
        if isinstance(node, float):
            if not math.isfinite(node):
                raise ValueError(f"{where}{path}: {node!r} is not a valid JSON number")
            continue
        if depth > max_depth:
            raise ValueError(
                f"{where}{path}: nesting deeper than AGENT_SESSIONS['MAX_ITEM_DEPTH'] ({max_depth})"
            )
        if isinstance(node, Mapping):
            for key, child in node.items():
                if not isinstance(key, str):
                    raise TypeError(
                        f"{where}{path}: object key {key!r} is {type(key).__name__}, "
                        "JSON keys must be str"
                    )
                stack.append((child, depth + 1, f"{path}[{key!r}]"))
        elif isinstance(node, list | tuple):
            stack.extend((child, depth + 1, f"{path}[{i}]") for i, child in enumerate(node))
        else:
            raise TypeError(f"{where}{path}: {type(node).__name__} is not JSON serializable")


# Built once: ``json.dumps`` with options builds a new encoder on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ASCII_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def dumps(item: Mapping[str, Any]) -> str:
    """Compact JSON text; falls back to ASCII escapes for lone surrogates."""
    text = _ENCODER.encode(item)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (valid in JSON text as an escape) cannot be stored as UTF-8.
        text = _ASCII_ENCODER.encode(item)
    return text


def loads(payload: str) -> Any:
    return json.loads(payload)


def decode_payloads(payloads: Iterable[str]) -> list[Any]:
    """Decode stored payloads, skipping (and logging) any that are not valid JSON.

    Only a hand-edited row can fail: writes are validated. Skipping it, as the SDK's own
    backends do, keeps the conversation usable.
    """
    items = []
    for payload in payloads:
        try:
            items.append(json.loads(payload))
        except ValueError:
            logger.warning("Skipping a stored session item that is not valid JSON.")
    return items


def item_type(item: Mapping[str, Any]) -> str:
    """The item's ``type``; the SDK's easy input messages omit it and mean ``message``."""
    value = item.get("type")
    if isinstance(value, str) and value:
        return value
    return "message" if "role" in item else "unknown"


def is_call_output(item: Mapping[str, Any]) -> bool:
    # Items without a string "type" are messages or unknown, never outputs.
    kind = item.get("type")
    return (
        isinstance(kind, str)
        and kind.endswith(_OUTPUT_SUFFIX)
        and bool(_str_field(item, "call_id"))
    )


def message_text(item: Mapping[str, Any]) -> str:
    """The plain text of a message item (input or output content parts)."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for part in content:
        if isinstance(part, Mapping):
            text = part.get("text", part.get("refusal"))
            if isinstance(text, str):
                parts.append(text)
    return "".join(parts)


def preview(item: Mapping[str, Any]) -> str:
    """A short, single-line description for lists and search."""
    kind = item_type(item)
    if kind == "message":
        text = message_text(item)
    elif kind.endswith(_OUTPUT_SUFFIX):
        output = item.get("output")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    elif kind == "function_call":
        text = f"{_str_field(item, 'name')}({_str_field(item, 'arguments')})"
    elif kind == "reasoning":
        summary = item.get("summary")
        text = message_text({"content": summary}) if isinstance(summary, list) else ""
    else:
        text = _str_field(item, "name") or kind
    return column_text(" ".join(text.split()), PREVIEW_CHARS)


def _str_field(item: Mapping[str, Any], key: str) -> str:
    value = item.get(key)
    return value if isinstance(value, str) else ""


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
        if isinstance(kind, str) and kind.endswith(_OUTPUT_SUFFIX) and _is_id(call_id):
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


def _is_id(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value)


_SURROGATE = re.compile("[\ud800-\udfff]")


def is_valid_unicode(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8: False when it holds a lone surrogate.

    ``json.loads`` accepts ``"\\ud800"`` (half of an emoji, as ``JSON.stringify`` of a cut
    string produces); UTF-8 (websocket text frames) and msgpack (channels_redis) cannot
    carry it.
    """
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def valid_unicode(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD.

    For display only (frames, the channel layer): stored items keep the exact value.
    Returns ``value`` itself when there is nothing to replace.
    """
    if isinstance(value, str):
        if is_valid_unicode(value):
            return value
        # In a Python str every surrogate code point is a lone one (json.loads joins pairs).
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {valid_unicode(key): valid_unicode(child) for key, child in value.items()}
    if isinstance(value, list):
        return [valid_unicode(child) for child in value]
    return value
