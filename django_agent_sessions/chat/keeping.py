"""``POST c/<session_id>/keep/``: the person pins or archives one of their conversations.

The form's fields ``pinned`` and ``archived`` are ``"1"`` or ``"0"`` (either may be left
out: unchanged). The answer is ``{"id", "pinned", "archived"}`` as asked, 400 for a value
that is neither, 404 for a conversation that is not the person's (``store.keeping``).
Under Django's CSRF protection, like the page's other POSTs. A run may go on meanwhile:
keeping changes neither the history nor the run.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from django_agent_sessions.store import keeping, owned

_FLAGS = {"1": True, "0": False}


@require_POST
@login_required
def keep(request: HttpRequest, session_id: str) -> JsonResponse:
    asked: dict[str, bool | None] = {}
    for name in ("pinned", "archived"):
        value = request.POST.get(name)
        if value is not None and value not in _FLAGS:
            return JsonResponse({"error": _("Say 1 or 0.")}, status=400)
        asked[name] = None if value is None else _FLAGS[value]
    try:
        keeping.keep(session_id, request.user.pk, **asked)
    except owned.NotFound:
        raise Http404(_("No such conversation.")) from None
    return JsonResponse({"id": session_id, **asked})
