"""``POST c/<session_id>/items/<item_id>/feedback/``: the signed-in person rates a reply;
``GET c/<session_id>/feedback/``: their ratings in that conversation, for the page.

The body is JSON: ``{"rating": 1 | -1, "comment": "...", "tags": ["..."]}`` (comment and
tags optional). The answer is the saved rating, or ``{"error": ...}`` with 400 saying
what is wrong (``store.feedback``), and 404 for a conversation that is not the person's.
A POST under Django's CSRF protection, like the page's other changes.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from django_agent_sessions.exceptions import FeedbackRejected
from django_agent_sessions.store import feedback, owned

MAX_BODY_BYTES = 16 * 1024


@require_POST
@login_required
def rate_reply(request: HttpRequest, session_id: str, item_id: int) -> JsonResponse:
    body = _json_body(request)
    if body is None:
        return JsonResponse({"error": _("The body must be a JSON object.")}, status=400)
    try:
        saved = feedback.give(
            request.user,
            session_id,
            item_id,
            rating=body.get("rating"),  # checked by give(), as the rest
            comment=body.get("comment", ""),
            tags=body.get("tags", []),
        )
    except owned.NotFound:
        raise Http404(_("No such conversation.")) from None
    except FeedbackRejected as rejected:
        return JsonResponse({"error": str(rejected)}, status=400)
    return JsonResponse(
        {
            "item_id": item_id,
            "rating": saved.rating,
            "comment": saved.comment,
            "tags": saved.tag_list,
        }
    )


@require_GET
@login_required
def ratings_of(request: HttpRequest, session_id: str) -> JsonResponse:
    """``{"ratings": [{"item_id", "rating", "comment", "tags"}]}``: what the page shows
    pressed on its replies (404, like the POST, for a conversation not the person's)."""
    try:
        return JsonResponse({"ratings": feedback.ratings_of(request.user, session_id)})
    except owned.NotFound:
        raise Http404(_("No such conversation.")) from None


def _json_body(request: HttpRequest) -> dict[str, Any] | None:
    if len(request.body) > MAX_BODY_BYTES:
        return None
    try:
        body = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None
