"""Turning SDK input items into their stored form and back. No database access here.

What an item *is* (its kind, role and text) is ``items``' business; this module only
validates, encodes and decodes, and fills the browsing columns from ``item_views.describe``.

Items are stored as JSON *text*, not as a JSON column: PostgreSQL's ``jsonb`` reorders
object keys and rejects strings containing ``\\u0000``, and every JSON column type loses
the difference between ``1.0`` and ``1`` on some backend. Text round-trips exactly on
every database Django supports.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from django_agent_sessions import item_views
from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import ItemRejected
from django_agent_sessions.files import inline
from django_agent_sessions.files.inline import MARK as MARK  # starts a payload with files

logger = logging.getLogger(__name__)

PREVIEW_CHARS = 200
#: The most of an item's text that search indexes (a tsvector holds at most 1 MB).
SEARCH_CHARS = 100_000


class EncodedItem(NamedTuple):
    """One item ready to insert: its JSON text and the columns used for browsing.

    A named tuple: a batch builds one per item, and it is cheaper than a frozen dataclass.
    Its fields are in the order of the item table's columns, which ``store.items`` relies on.
    """

    payload: str
    item_type: str
    role: str
    call_id: str
    preview: str
    search_text: str = ""  # what search finds (``item_views.search_text``)


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
    if type(item) is not dict and not isinstance(item, Mapping):
        raise TypeError(f"item {index}: an item must be a dict, not {type(item).__name__}")
    if not _is_exact_json(item, max_depth):
        _raise_first_problem(item, where=f"item {index}", max_depth=max_depth)
    payload, size = _dumps_sized(item)
    if max_bytes is not None and size > max_bytes:
        raise ItemRejected(
            f"item {index}: {size} bytes of JSON exceeds "
            f"AGENT_SESSIONS['MAX_ITEM_BYTES'] ({max_bytes})"
        )
    return EncodedItem(  # positional, in column order: the cheapest way to build one
        payload,
        column_text(item_views.item_type(item), 64),
        column_text(item_views.text_field(item, "role"), 32),
        column_text(item_views.text_field(item, "call_id"), 255),
        preview(item),
        _searched(item),
    )


def _searched(item: Mapping[str, Any]) -> str:
    """The ``search_text`` column: "" when search is off (no index holds empty text)."""
    mode = search_mode()
    return "" if mode is None else column_text(item_views.search_text(item, mode), SEARCH_CHARS)


def search_mode() -> bool | None:
    """None when ``AGENT_SESSIONS["SEARCH"]["ENABLED"]`` is False (search is off);
    else whether search finds tools' outputs too (``"TOOL_OUTPUTS"``)."""
    configured = app_settings.SEARCH
    if not configured:
        return False
    if configured.get("ENABLED", True) is False:
        return None
    return bool(configured.get("TOOL_OUTPUTS"))


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
                raise ItemRejected(f"{where}{path}: {node!r} is not a valid JSON number")
            continue
        if depth > max_depth:
            raise ItemRejected(
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


def _direct_encoder() -> Callable[[Any], str] | None:
    """``_ENCODER.encode`` without its per-call set-up, or None where that is not possible.

    ``JSONEncoder.encode`` builds a C encoder object (and a dict for cycle detection)
    on every call; this builds it once, with the same arguments ``JSONEncoder.iterencode``
    passes (CPython 3.10-3.14). Cycle detection is off: only validated items are encoded
    here, and validation rejects anything nested beyond ``MAX_ITEM_DEPTH``, cycles
    included. Used only if it gives byte-identical output on a probe (and
    ``tests/test_serialization.py`` compares it with ``JSONEncoder`` on every kind of value).
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    basestring = getattr(json.encoder, "c_encode_basestring", None)
    if make is None or basestring is None:
        return None
    try:
        iterencode = make(None, _ENCODER.default, basestring, None, ":", ",", False, False, False)

        def encode(item: Any) -> str:
            return "".join(iterencode(item, 0))

        probe = {"a": [1, 2.5, -0.0, 1e300, True, None, 'é\u2028\x00"\\'], "b": {"c": ""}}
        if encode(probe) != _ENCODER.encode(probe):
            return None
        encode(float("nan"))
    except ValueError:  # allow_nan=False is in force: the probe must be refused
        return encode
    except Exception:
        return None
    return None


_FAST_ENCODE = _direct_encoder()
_encode = _FAST_ENCODE or _ENCODER.encode


def dumps(item: Mapping[str, Any]) -> str:
    """Compact JSON text of a validated item; ASCII escapes for lone surrogates."""
    return _dumps_sized(item)[0]


def _dumps_sized(item: Mapping[str, Any]) -> tuple[str, int]:
    """``dumps(item)`` and its size in UTF-8 bytes, encoding it to UTF-8 at most once."""
    text = _encode(item)
    if text.isascii():
        return text, len(text)
    try:
        return text, len(text.encode("utf-8"))
    except UnicodeEncodeError:
        # A lone surrogate (valid in JSON text as an escape) cannot be stored as UTF-8.
        text = _ASCII_ENCODER.encode(item)
        return text, len(text)


def loads(payload: str) -> Any:
    """The item a row holds, for display: a file kept in storage shows as its name
    (``files.inline.shown``); ``decode_payloads`` gives items back whole."""
    if payload[:1] == MARK:
        return inline.shown(payload)
    return json.loads(payload)


def decode_payloads(payloads: Iterable[str]) -> list[Any]:
    """Decode stored payloads, skipping (and logging) any that are not valid JSON.

    Only a hand-edited row can fail: writes are validated. Skipping it, as the SDK's own
    backends do, keeps the conversation usable.
    """
    items: list[Any] = []
    append, scan = items.append, _scan_once
    for payload in payloads:
        # The C scanner alone, as json.loads(payload) runs it, when the whole payload is
        # one value with no surrounding whitespace (every payload this app writes);
        # anything else (and anything it refuses) goes to json.loads, which decides.
        try:
            value, end = scan(payload, 0)
            if end == len(payload):
                append(value)
                continue
        except (StopIteration, ValueError, TypeError, RecursionError):
            pass
        try:
            append(_offloaded(payload) if payload[:1] == MARK else json.loads(payload))
        except ValueError:
            logger.warning("Skipping a stored session item that is not valid JSON.")
        except OSError:
            logger.exception("Skipping a stored session item whose file cannot be read.")
    return items


def _offloaded(payload: str) -> Any:
    """An item whose inline files are in storage (``files.inline``), put back together."""
    from django_agent_sessions.files import storage  # Django's storage API, when needed

    return inline.restore(payload, storage.load_text)


# The scanner json.loads runs (JSONDecoder.raw_decode calls it): C in CPython.
_scan_once: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def preview(item: Mapping[str, Any]) -> str:
    """The browsing column: a short, single-line description for lists and search."""
    view = item_views.describe(item)
    if view.kind == "tool_call":
        text = f"{view.name}({view.arguments})"
    elif view.kind == "other":
        text = view.name or view.type
    else:
        text = view.text
    # Only the start can show: never split a multi-megabyte text into words.
    return column_text(collapse_whitespace(text[: PREVIEW_CHARS * 4]), PREVIEW_CHARS)


def collapse_whitespace(text: str) -> str:
    """``" ".join(text.split())``: the split and join (a fifth of encoding two items) are
    skipped for printable text with no leading, trailing or doubled space, which they
    leave as it is (all that ``split()`` splits on but the space is unprintable)."""
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())
