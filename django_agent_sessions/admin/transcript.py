"""Stored items turned into display entries for the admin transcript.

Items are classified by ``item_views.describe``; this module only labels and folds them.

Everything an entry holds is plain text, which templates escape, except ``html``: an
assistant message's Markdown as rendered and sanitized by ``rendering.render_markdown``
(raw HTML disabled, then nh3), the one place where model output becomes markup. Model
output is attacker-influenced (prompt injection through tools), so nothing else from a
payload is ever marked safe.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from django_agent_sessions import item_views, serialization
from django_agent_sessions.rendering import render_markdown

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
    # "cancelled" or "failed" for the unfinished reply of a run (not a stored item).
    status: str = ""
    html: SafeString | str = ""
    files: tuple[dict[str, Any], ...] = ()  # id, name, content_type, size


def run_note(run: Any) -> Entry:
    """The reply a stopped or failed run had streamed when it ended. It is not one of
    the session's items (the model never sees it), so it has no raw JSON."""
    if run.status == "failed":
        label = _("Assistant (failed: %(code)s)") % {"code": run.error_code or "agent_error"}
    else:
        label = _("Assistant (stopped)")
    return Entry(
        pk=0,
        created_at=run.finished_at or run.started_at,
        kind="message",
        role="assistant",
        css_role="assistant",
        label=label,
        text=run.partial_text,
        detail="",
        folded=False,
        raw="",
        status=run.status,
        html=mark_safe(render_markdown(run.partial_text)),  # noqa: S308  # sanitized
    )


def with_run_notes(entries: list[Entry], runs: list[Any], *, last_page: bool) -> list[Entry]:
    """``entries`` with each run's note after the run's last item on this page."""
    if not runs:
        return entries
    notes = item_views.notes_to_show([entry.pk for entry in entries], runs)
    merged: list[Entry] = []
    for item in entries:
        while notes and notes[0].last_item_id < item.pk:
            merged.append(run_note(notes.pop(0)))
        merged.append(item)
    if last_page:
        merged.extend(run_note(run) for run in notes)
    return merged


def tool_calls(payloads: Iterable[str]) -> tuple[dict[str, str], set[str]]:
    """The tool names of the calls among ``payloads`` (by call id), and the call ids
    their tool outputs answer: a page's outputs are labelled by the name of their tool."""
    names: dict[str, str] = {}
    answered: set[str] = set()
    for payload in payloads:
        try:
            item = serialization.loads(payload)
        except (ValueError, RecursionError):
            continue
        if not isinstance(item, Mapping):
            continue
        view = item_views.describe(item)
        if view.kind == "tool_call" and view.call_id:
            names[view.call_id] = view.name
        elif view.kind == "tool_output" and view.call_id:
            answered.add(view.call_id)
    return names, answered


def entry(
    pk: int,
    created_at: datetime,
    payload: str,
    tool_names: Mapping[str, str] | None = None,
    files: tuple[dict[str, Any], ...] = (),
) -> Entry:
    """The display entry for one stored item; ``tool_names`` maps call ids to tools,
    ``files`` are its stored files (``store.uploads.files_by_item``), linked below it."""
    shown = _shown_entry(pk, created_at, payload, tool_names)
    return dataclasses.replace(shown, files=files) if files else shown


def _shown_entry(
    pk: int, created_at: datetime, payload: str, tool_names: Mapping[str, str] | None
) -> Entry:
    try:
        item = serialization.loads(payload)
    except (ValueError, RecursionError):
        item = None
    if not isinstance(item, Mapping):
        return _entry(pk, created_at, "other", "", _("Unreadable item"), "", payload)
    raw = json.dumps(item, ensure_ascii=False, indent=2)
    view = item_views.describe(item)
    if view.kind == "message":
        label = str(_ROLES.get(view.role, view.role or _("message")))
        message = _entry(pk, created_at, "message", view.role, label, view.text, raw)
        if view.role == "user":
            return message
        # Sanitized by render_markdown (see the module's docstring): safe by construction.
        html = mark_safe(render_markdown(view.text))  # noqa: S308
        return dataclasses.replace(message, html=html)
    if view.kind == "reasoning":
        return _entry(pk, created_at, "reasoning", "", _("Reasoning"), view.text, raw)
    if view.kind == "tool_output":
        name = (tool_names or {}).get(view.call_id)
        if name:
            label = _("Output of %(name)s") % {"name": name}
        else:
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
