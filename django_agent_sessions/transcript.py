"""Stored items turned into display entries for the admin transcript. No HTML here.

Everything an entry holds is plain text; templates escape it. Model output is
attacker-influenced (prompt injection through tools), so nothing from a payload is ever
marked safe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from django_agent_sessions import serialization

_ROLES = {
    "user": gettext_lazy("User"),
    "assistant": gettext_lazy("Assistant"),
    "system": gettext_lazy("System"),
    "developer": gettext_lazy("Developer"),
}

# Longer tool outputs and arguments are folded behind a <details> summary.
FOLD_CHARS = 600
FOLD_LINES = 12
HANDOFF_PREFIX = "transfer_to_"


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
    except ValueError:
        item = None
    if not isinstance(item, Mapping):
        return _entry(pk, created_at, "other", "", _("Unreadable item"), "", payload)
    raw = json.dumps(item, ensure_ascii=False, indent=2)
    kind = serialization.item_type(item)
    role = _str(item, "role")
    if kind == "message":
        label = str(_ROLES.get(role, role or _("message")))
        return _entry(pk, created_at, "message", role, label, _content(item), raw)
    if kind == "reasoning":
        return _entry(pk, created_at, "reasoning", "", _("Reasoning"), _reasoning(item), raw)
    if kind.endswith("_output"):
        label = _("Output of %(call_id)s") % {"call_id": _str(item, "call_id") or kind}
        return _entry(pk, created_at, "tool_output", "", label, _output(item), raw)
    if kind == "function_call" and _str(item, "name").startswith(HANDOFF_PREFIX):
        label = _("Handoff: %(name)s") % {"name": _str(item, "name")}
        return _entry(pk, created_at, "handoff", "", label, _arguments(item), raw)
    if kind.endswith("_call"):
        label = _("Tool call: %(name)s") % {"name": _str(item, "name") or kind}
        return _entry(pk, created_at, "tool_call", "", label, _arguments(item), raw)
    return _entry(pk, created_at, "other", "", kind, serialization.preview(item), raw)


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


def _content(item: Mapping[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(_part(part) for part in content if isinstance(part, Mapping))


def _part(part: Mapping[str, Any]) -> str:
    kind = _str(part, "type")
    for key in ("text", "refusal"):
        if isinstance(part.get(key), str):
            return str(part[key])
    if kind == "input_image":
        return _("[image]")
    if kind == "input_file":
        return _("[file: %(name)s]") % {"name": _str(part, "filename") or _("unnamed")}
    return f"[{kind or _('content')}]"


def _reasoning(item: Mapping[str, Any]) -> str:
    summary = item.get("summary")
    if not isinstance(summary, list):
        return ""
    return "\n\n".join(_str(part, "text") for part in summary if isinstance(part, Mapping))


def _arguments(item: Mapping[str, Any]) -> str:
    arguments = item.get("arguments")
    if isinstance(arguments, str):
        return _pretty_json_text(arguments)
    # Hosted tools (web search, file search, computer, shell...) carry an action instead.
    details = {k: v for k, v in item.items() if k not in {"type", "id", "status", "call_id"}}
    return json.dumps(details, ensure_ascii=False, indent=2) if details else ""


def _output(item: Mapping[str, Any]) -> str:
    output = item.get("output")
    if isinstance(output, str):
        return _pretty_json_text(output)
    if isinstance(output, list):
        return "\n".join(_part(part) for part in output if isinstance(part, Mapping))
    return json.dumps(output, ensure_ascii=False, indent=2)


def _pretty_json_text(text: str) -> str:
    """Indent JSON text (tool arguments usually are JSON); anything else as it is."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return text


def _str(item: Mapping[str, Any], key: str) -> str:
    value = item.get(key)
    return value if isinstance(value, str) else ""
