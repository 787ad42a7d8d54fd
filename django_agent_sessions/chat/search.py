"""The sidebar's search (``search.js``): the signed-in person's conversations whose title
or messages hold the words of ``?q=`` (``store.search``), as JSON; archived ones only
with ``?archived=1`` (``store.keeping``). A snippet is a list of
``[text, match]`` pairs of plain text: the page marks the matches with text nodes."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from django_agent_sessions.store import keeping

MAX_QUERY_CHARS = 200
RESULTS = 20


@require_GET
@login_required
def search(request: HttpRequest) -> JsonResponse:
    """``{"results": [{"session_id", "title", "item_id", "url", "snippet"}]}``; a hit on
    a message links to it (``#item-<id>``), a hit on a title to the conversation."""
    query = request.GET.get("q", "")[:MAX_QUERY_CHARS]
    results = []
    archived = request.GET.get("archived") == "1"  # the sidebar shows archived ones
    for hit in keeping.search_kept(request.user.pk, query, RESULTS, archived=archived):
        url = reverse("django_agent_sessions:conversation", args=[hit.session_id])
        results.append(
            {
                "session_id": hit.session_id,
                "title": hit.title,
                "item_id": hit.item_id,
                "url": url if hit.item_id is None else f"{url}#item-{hit.item_id}",
                "snippet": [[segment.text, segment.match] for segment in hit.snippet],
            }
        )
    return JsonResponse({"results": results})
