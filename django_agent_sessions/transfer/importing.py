"""Reading an export back: validate everything, then write it all in one transaction
(``store.importing``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django_agent_sessions import serialization
from django_agent_sessions.conf import app_settings
from django_agent_sessions.files import inline
from django_agent_sessions.files import storage as file_storage
from django_agent_sessions.files.inline import InlineFile
from django_agent_sessions.models import SESSION_ID_MAX_LENGTH
from django_agent_sessions.store import importing as store_importing
from django_agent_sessions.store.importing import Conversation
from django_agent_sessions.transfer.format import (
    FORMAT,
    FORMATS,
    IMPORT_INSERT_BATCH,
    ITEM_BATCH,
    VERSION,
)

Files = dict[int, list[InlineFile]]  # inline files taken out of items, by position


class TransferError(ValueError):
    """An import file that cannot be loaded; the message names the problem and where."""


@dataclass(frozen=True)
class Imported:
    conversations: int
    items: int


def detect_format(text: str) -> str:
    """``jsonl`` when the text is several JSON values, one per line; else ``json``."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return "json"
    try:
        for line in lines:
            json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return "json"
    return "jsonl"


def parse(text: str, fmt: str = "json") -> list[Conversation]:
    """Decode and validate a whole export; raises ``TransferError`` naming the problem."""
    if fmt == "jsonl":
        records = [
            (f"line {number}", _decode(line, f"line {number}"))
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        ]
    elif fmt == "json":
        document = _decode(text, "the file", jsonl_hint=True)
        records = [
            (f"conversation {number}", record)
            for number, record in enumerate(_document_conversations(document), start=1)
        ]
    else:
        raise TransferError(f"Unknown import format {fmt!r}; use one of {', '.join(FORMATS)}.")
    conversations = [_conversation(record, where) for where, record in records]
    _check_unique(conversations)
    return conversations


def import_conversations(
    conversations: Sequence[Conversation], *, using: str | None = None
) -> Imported:
    """Insert validated conversations in one transaction; all or nothing."""
    try:
        store_importing.insert(
            conversations,
            using=using,
            conversation_batch=IMPORT_INSERT_BATCH,
            item_batch=ITEM_BATCH,
        )
    except store_importing.Conflict as conflict:
        raise TransferError(str(conflict)) from None
    return Imported(len(conversations), sum(len(c.items) for c in conversations))


_JSONL_HINT = " It looks like JSON Lines (a conversation per line): pass --format jsonl."


def _decode(text: str, where: str, *, jsonl_hint: bool = False) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        hint = _JSONL_HINT if jsonl_hint and error.msg == "Extra data" else ""
        raise TransferError(
            f"{where}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}."
            + hint
        ) from None
    except RecursionError:
        raise TransferError(f"{where}: invalid JSON: nested too deeply") from None


def _document_conversations(document: Any) -> list[Any]:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        hint = _JSONL_HINT if isinstance(document, dict) and "session_id" in document else ""
        raise TransferError(
            f'the file is not a {FORMAT} export: expected an object with "format": "{FORMAT}".'
            + hint
        )
    if document.get("version") != VERSION:
        raise TransferError(f"unsupported export version {document.get('version')!r}.")
    conversations = document.get("conversations")
    if not isinstance(conversations, list):
        raise TransferError('"conversations" must be a list.')
    return conversations


def _conversation(record: Any, where: str) -> Conversation:
    if not isinstance(record, dict):
        raise TransferError(f"{where}: a conversation must be an object.")
    session_id = _string(record, "session_id", where, max_length=SESSION_ID_MAX_LENGTH)
    if not session_id.strip():
        raise TransferError(f"{where}: session_id must not be empty.")
    where = f"{where} ({session_id!r})"
    owner = record.get("owner")
    if owner is not None and not isinstance(owner, str):
        raise TransferError(f"{where}: owner must be a username or null.")
    entries = record.get("items")
    if not isinstance(entries, list):
        raise TransferError(f"{where}: items must be a list.")
    items, files = _items(entries, where)
    return Conversation(
        session_id=session_id,
        owner=owner,
        title=_string(record, "title", where, max_length=255),
        metadata=record.get("metadata") or {},
        created_at=_timestamp(record.get("created_at"), f"{where}: created_at"),
        updated_at=_timestamp(record.get("updated_at"), f"{where}: updated_at"),
        items=items,
        files=files,
    )


def _items(entries: list[Any], where: str) -> tuple[list[tuple[datetime, Any]], Files]:
    """The conversation's ``items`` (time and encoded item) and the inline ``files`` taken
    out of them (by position), as ``DjangoSession.add_items`` takes them out."""
    # Positions count from 1, like the lines of a JSONL file: "item 1" is the first.
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or "item" not in entry:
            raise TransferError(
                f'{where}: item {number}: expected {{"created_at": ..., "item": ...}}.'
            )
    threshold = int(file_storage.setting("OFFLOAD_CHARS"))
    stripped, files = inline.split_batch([entry["item"] for entry in entries], threshold)
    try:
        encoded = [
            serialization.encode_item(
                item,
                index=number,
                max_bytes=app_settings.MAX_ITEM_BYTES,
                max_depth=app_settings.MAX_ITEM_DEPTH,
            )
            for number, item in enumerate(stripped, start=1)
        ]
    except (TypeError, ValueError) as error:
        raise TransferError(f"{where}: {error}") from None
    times = [
        _timestamp(entry.get("created_at"), f"{where}: item {number}: created_at")
        for number, entry in enumerate(entries, start=1)
    ]
    return list(zip(times, encoded, strict=True)), files


def _string(record: dict[str, Any], key: str, where: str, *, max_length: int) -> str:
    value = record.get(key, "")
    if not isinstance(value, str):
        raise TransferError(f"{where}: {key} must be a string.")
    if len(value) > max_length or "\x00" in value:
        raise TransferError(f"{where}: {key} must be at most {max_length} characters, no NUL.")
    return value


def _timestamp(value: Any, where: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise TransferError(f"{where}: expected an ISO 8601 timestamp with a UTC offset.")
    return parsed


def _check_unique(conversations: Iterable[Conversation]) -> None:
    seen: set[str] = set()
    for conversation in conversations:
        if conversation.session_id in seen:
            raise TransferError(f"Conversation {conversation.session_id!r} appears twice.")
        seen.add(conversation.session_id)
