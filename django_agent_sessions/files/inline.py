"""Inline file data in SDK items, taken out for storage and put back exactly.

The SDK gives files to a model as parts of an item's content (or of a tool's output
list): ``{"type": "input_image", "image_url": "data:image/png;base64,..."}`` and
``{"type": "input_file", "file_data": "...", "filename": "..."}``. A 5 MB image is a
7 MB string, which would be read back with every ``get_items``. ``split`` takes such
strings out of an item (longer than a threshold, and canonical base64, so that encoding
the bytes again gives the same text); the row then holds the item with those strings
empty and a list of references (``payload``); ``restore`` puts them back.

A stored payload that holds references starts with ``MARK``, which no JSON text starts
with, then the references' JSON, a newline (compact JSON never holds one), and the
item's JSON. No database or storage access here.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from django_agent_sessions.files import sniffing

MARK = "~"

_FIELDS = {"input_image": "image_url", "input_file": "file_data"}
_BASE64_MARK = ";base64,"

Path = tuple[Any, ...]  # keys and indexes from the item down to the string

_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class InlineFile(NamedTuple):
    """One string taken out of an item: where it was, its text before the data (a data
    URL's ``data:<type>;base64,``), and the data's bytes."""

    path: Path
    prefix: str
    data: bytes
    sha256: str
    content_type: str
    filename: str


def split(item: Any, min_chars: int) -> tuple[Any, list[InlineFile]]:
    """``item`` without its inline files longer than ``min_chars``, and those files.

    The item itself is never changed: a copy is returned when anything was taken out.
    """
    found = [inline for inline in map(_decoded, _candidates(item, min_chars)) if inline]
    if not found:
        return item, []
    stripped = copy.deepcopy(item)
    for inline in found:
        _set(stripped, inline.path, "")
    return stripped, found


def split_batch(items: Any, min_chars: int) -> tuple[Any, dict[int, list[InlineFile]]]:
    """``split`` for each item of a batch: the batch to encode, and the files taken out
    of it by the item's position. Anything but a list or tuple is returned as it is."""
    if not isinstance(items, list | tuple):
        return items, {}
    files: dict[int, list[InlineFile]] = {}
    batch: list[Any] | None = None  # copied only when an item had files (rarely)
    for index, item in enumerate(items):
        if not _has_file_part(item):  # most items: no generator, no list built
            continue
        stripped, found = split(item, min_chars)
        if found:
            batch = batch or list(items)
            batch[index], files[index] = stripped, found
    return (items if batch is None else batch), files


def payload(item_payload: str, files: list[InlineFile], storage_names: list[str]) -> str:
    """The stored text of an item (``item_payload``, its JSON without the files) whose
    files were stored under ``storage_names``."""
    references = [
        {"at": list(inline.path), "name": name, "prefix": inline.prefix}
        for inline, name in zip(files, storage_names, strict=True)
    ]
    return MARK + json.dumps(references, separators=(",", ":")) + "\n" + item_payload


def references(stored: str) -> list[dict[str, Any]]:
    """The references a stored payload holds (``[]`` for a plain item)."""
    if not stored.startswith(MARK):
        return []
    head, _, _ = stored.partition("\n")
    return list(json.loads(head[len(MARK) :]))


def restore(stored: str, load_text: Callable[[str, str], str]) -> Any:
    """The item a ``payload()`` text was made from; ``load_text(name, prefix)`` gives
    the string a reference stands for (the prefix, then the file's bytes in base64)."""
    # The C scanner straight on the stored text (as serialization.decode_payloads does):
    # no slicing of either part, no json.loads set-up per call.
    references, _ = _scan(stored, len(MARK))
    item, _ = _scan(stored, stored.index("\n") + 1)
    for reference in references:
        text = load_text(reference["name"], reference["prefix"])
        _set(item, reference["at"], text)
    return item


def shown(stored: str) -> Any:
    """The item a ``payload()`` text holds, each file as ``<prefix>[stored file NAME]``
    (for display: reads no storage)."""
    return restore(stored, lambda name, prefix: f"{prefix}[stored file {name}]")


def _has_file_part(item: Any) -> bool:
    """Whether an item has a content or output part that can hold a file (the cheap
    check before ``split``: a text-only item was 2 µs of every ``add_items``)."""
    if type(item) is not dict and not isinstance(item, Mapping):
        return False
    for key in ("content", "output"):
        parts = item.get(key)
        if type(parts) is list:
            for part in parts:
                if type(part) is dict and part.get("type") in _FIELDS:
                    return True
                if type(part) is not dict and isinstance(part, Mapping):
                    return True  # (rare: let ``split`` look at it)
        elif isinstance(parts, list):
            return True
    return False


def _candidates(item: Any, min_chars: int) -> Iterator[tuple[Path, str, Mapping[str, Any]]]:
    """The long file strings in an item's content parts and tool output parts."""
    if not isinstance(item, Mapping):
        return
    for key in ("content", "output"):
        parts = item.get(key)
        if not isinstance(parts, list):
            continue
        for index, part in enumerate(parts):
            if not isinstance(part, Mapping):
                continue
            field = _FIELDS.get(part.get("type"))  # type: ignore[arg-type]
            value = part.get(field) if field else None
            if isinstance(value, str) and len(value) > min_chars:
                yield (key, index, field), value, part


def _decoded(candidate: tuple[Path, str, Mapping[str, Any]]) -> InlineFile | None:
    path, value, part = candidate
    prefix, marker, data = value.partition(_BASE64_MARK)
    if marker and value.startswith("data:"):
        prefix += marker
    elif path[-1] == "file_data":
        prefix, data = "", value  # plain base64, as the SDK also accepts
    else:
        return None  # an image URL that is not a data URL: nothing inline
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    if base64.b64encode(raw).decode("ascii") != data:
        return None  # not canonical base64: kept inline, so that it comes back exactly
    filename = part.get("filename")
    return InlineFile(
        path,
        prefix,
        raw,
        hashlib.sha256(raw).hexdigest(),
        sniffing.content_type(raw),
        filename if isinstance(filename, str) else "",
    )


def _set(item: Any, path: Path | list[Any], value: str) -> None:
    node = item
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
