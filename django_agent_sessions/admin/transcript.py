"""Stored items turned into display entries for the admin transcript. No HTML here.

Items are classified by ``items.describe``; this module only labels and folds them.

Everything an entry holds is plain text; templates escape it. Model output is
attacker-influenced (prompt injection through tools), so nothing from a payload is ever
marked safe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from django_agent_sessions import items, serialization

_ROLES = {
    "user": gettext_lazy("User"),
    "assistant": gettext_lazy("Assistant"),
    "system": gettext_lazy("System"),
    "developer": gettext_lazy("Developer"),
}

# Longer tool outputs and arguments are folded behind a <details> summary.
FOLD_CHARS = 600
FOLD_LINES = 12


@dataclass(frozen=True)
class Entry:
    """One transcript row. ``kind`` is message, tool_call, tool_output, reasoning,
    handoff or other; ``role`` is user/assistant/system/developer for messages."""

    pk: int
    created_at: datetime
    kind: str
    role: str
    css_role: str
    label: str
    text: str
    detail: str
    folded: bool
    raw: str


def entry(pk: int, created_at: datetime, payload: str) -> Entry:
    """The display entry for one stored item."""
    try:
        item = serialization.loads(payload)
    except (ValueError, RecursionError):
        item = None
    if not isinstance(item, Mapping):
        return _entry(pk, created_at, "other", "", _("Unreadable item"), "", payload)
    raw = json.dumps(item, ensure_ascii=False, indent=2)
    view = items.describe(item)
    if view.kind == "message":
        label = str(_ROLES.get(view.role, view.role or _("message")))
        return _entry(pk, created_at, "message", view.role, label, view.text, raw)
    if view.kind == "reasoning":
        return _entry(pk, created_at, "reasoning", "", _("Reasoning"), view.text, raw)
    if view.kind == "tool_output":
        label = _("Output of %(call_id)s") % {"call_id": view.call_id}
        return _entry(pk, created_at, "tool_output", "", label, _pretty(view.text), raw)
    if view.is_handoff:
        label = _("Handoff: %(name)s") % {"name": view.name}
        return _entry(pk, created_at, "handoff", "", label, _pretty(view.arguments), raw)
    if view.kind == "tool_call":
        label = _("Tool call: %(name)s") % {"name": view.name}
        return _entry(pk, created_at, "tool_call", "", label, _pretty(view.arguments), raw)
    return _entry(pk, created_at, "other", "", view.type, serialization.preview(item), raw)


def _entry(
    pk: int, created_at: datetime, kind: str, role: str, label: str, text: str, raw: str
) -> Entry:
    folded = kind in {"tool_output", "tool_call", "handoff", "other"} and _is_long(text)
    return Entry(
        pk=pk,
        created_at=created_at,
        kind=kind,
        role=role,
        css_role=role if role in _ROLES else "other",
        label=label,
        text=text,
        detail=_summary(text) if folded else "",
        folded=folded,
        raw=raw,
    )


def _is_long(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


def _summary(text: str) -> str:
    first = " ".join(text[:200].split())
    return _("%(start)s… (%(count)d characters)") % {"start": first, "count": len(text)}


def _pretty(text: str) -> str:
    """Indent JSON text (tool arguments usually are JSON); anything else as it is."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return text
