"""``POST c/<session_id>/branch/``: "Branch from here" on one of the person's messages.

The form's ``item_id`` names a stored user message. The answer is the new conversation
(``store.branches.branch_before``: what came before that message, copied exactly) as
``{"url", "text"}``: its page, and the message's text for the page to offer again; 404
for a conversation that is not the person's, 400 for an item that is not one of its user
messages. Under Django's CSRF protection, like the page's other POSTs.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, JsonResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from django_agent_sessions.chat.views import new_session_id
from django_agent_sessions.store import branches, owned


@require_POST
@login_required
def branch(request: HttpRequest, session_id: str) -> JsonResponse:
    try:
        item_id = int(request.POST.get("item_id", ""))
    except ValueError:
        return JsonResponse({"error": _("Say which message to branch from.")}, status=400)
    new_id = new_session_id()
    try:
        text = branches.branch_before(request.user.pk, session_id, new_id, item_id)
    except owned.NotFound:
        raise Http404(_("No such conversation.")) from None
    except LookupError:
        return JsonResponse({"error": _("That is not one of your messages here.")}, status=400)
    url = reverse("django_agent_sessions:conversation", args=[new_id])
    return JsonResponse({"url": url, "text": text})
