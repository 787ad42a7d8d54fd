"""Find in a transcript: the conversation's items whose text holds every word of the
``find`` query, listed above the transcript, each linking to the page that shows it.

The matching is ``store.search``'s (every word as the start of a word, on the same
index). Snippets are model and user text: each segment is escaped, and only the
``<mark>`` around a match is markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from django_agent_sessions.admin import positions
from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import search

#: The GET parameter of the query.
PARAMETER = "find"
#: At most this many items are listed; the page says when more match.
LIMIT = 50
# The query string the page keeps: a new search starts from the transcript's first page.
_RESTARTED = (PARAMETER, "page")

_LABELS = {"user": _("User"), "assistant": _("Assistant")}


@dataclass(frozen=True)
class Found:
    """One matching item: where it is and what of it matched."""

    item_id: int
    label: str
    page: int
    url: str
    snippet: SafeString


def context(request: HttpRequest, conversation: AgentSession, per_page: int) -> dict[str, Any]:
    """The find form's state and, for a query with words, its matches (``LIMIT``)."""
    query = request.GET.get(PARAMETER, "").strip()
    kept = [(name, value) for name, value in request.GET.items() if name not in _RESTARTED]
    found: dict[str, Any] = {"parameter": PARAMETER, "query": query, "kept": kept}
    if not query:
        return found
    terms = search.terms_of(query)
    if not terms:
        return {**found, "no_words": True}
    using = conversation._state.db or "default"
    hits = search.in_conversation(conversation.pk, query, LIMIT + 1, using=using)
    shown = hits[:LIMIT]
    pages = positions.pages_of(
        conversation.pk, (hit.item_id for hit in shown), per_page, using=using
    )
    return {
        **found,
        "searched": True,
        "hits": [_found(request, hit, pages[hit.item_id]) for hit in shown],
        "more": len(hits) > LIMIT,
        "limit": LIMIT,
    }


def _found(request: HttpRequest, hit: search.ItemHit, page: int) -> Found:
    query = request.GET.copy()
    query["page"] = str(page)
    label = _LABELS.get(hit.role) or (
        _("Tool output") if hit.item_type.endswith("_output") else _("Item")
    )
    return Found(
        item_id=hit.item_id,
        label=str(label),
        page=page,
        url=f"?{query.urlencode()}#item-{hit.item_id}",
        snippet=marked(hit.snippet),
    )


def marked(snippet: tuple[search.Segment, ...]) -> SafeString:
    """A snippet as HTML: its text escaped, its matches in ``<mark>``."""
    return format_html_join(
        "",
        "{}",
        (
            (format_html("<mark>{}</mark>", segment.text) if segment.match else segment.text,)
            for segment in snippet
        ),
    )
