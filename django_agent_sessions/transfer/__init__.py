"""Exporting conversations to JSON and importing them back, exactly.

One format, two framings. A JSON *document*::

    {"format": "django-agent-sessions", "version": 1, "conversations": [CONVERSATION, ...]}

or *JSONL*, one ``CONVERSATION`` per line, where ``CONVERSATION`` is::

    {"session_id": "...", "owner": "<username>" | null, "title": "...", "metadata": {...},
     "created_at": "<ISO 8601>", "updated_at": "<ISO 8601>",
     "items": [{"created_at": "<ISO 8601>", "item": {...SDK input item...}}, ...]}

Items are written as their stored JSON text, so an export carries exactly what the
conversation holds, and an import stores exactly what the export carried. An import
validates every conversation and every item before it writes anything, then writes all
of it in one transaction.
"""

from __future__ import annotations

from django_agent_sessions.store.importing import Conversation
from django_agent_sessions.transfer.exporting import export_chunks
from django_agent_sessions.transfer.format import FORMAT, FORMATS, VERSION, format_for
from django_agent_sessions.transfer.importing import (
    Imported,
    TransferError,
    detect_format,
    import_conversations,
    parse,
)

__all__ = [
    "FORMAT",
    "FORMATS",
    "VERSION",
    "Conversation",
    "Imported",
    "TransferError",
    "detect_format",
    "export_chunks",
    "format_for",
    "import_conversations",
    "parse",
]
