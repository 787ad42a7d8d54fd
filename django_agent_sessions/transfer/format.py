"""Names shared by export and import."""

from __future__ import annotations

FORMAT = "django-agent-sessions"
VERSION = 1
FORMATS = ("json", "jsonl")
IMPORT_INSERT_BATCH = 200  # conversation rows per INSERT when importing
ITEM_BATCH = 1000  # rows per INSERT, and per fetch when exporting, of items


def format_for(filename: str) -> str:
    """``jsonl`` for ``.jsonl``/``.ndjson`` files, ``json`` otherwise."""
    return "jsonl" if filename.lower().endswith((".jsonl", ".ndjson")) else "json"
