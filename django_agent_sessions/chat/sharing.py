"""The owner's share links: ``POST c/<session_id>/share/`` makes one (the chat's Share
action, ``sharing.js``), ``share/links/`` lists the person's links, and
``POST share/<token>/revoke/`` revokes one.

Only the link's creator lists or revokes it: anyone else's token answers 404, staff
included (they revoke in the admin). With ``SHARE_LINKS = "off"`` every one of these
answers 404. Under Django's CSRF protection, like the page's other POSTs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from django_agent_sessions.sharing.settings import enabled
from django_agent_sessions.store import owned, sharing

#: What the Share form offers for a link's life (``""``: until revoked).
EXPIRIES = {"": None, "1d": timedelta(days=1), "7d": timedelta(days=7), "30d": timedelta(days=30)}


def sharing_on(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """404 while ``SHARE_LINKS`` is ``"off"``, before anything else (even the login)."""

    @functools.wraps(view)
    def gated(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not enabled():
            raise Http404(_("Sharing is off."))
        return view(request, *args, **kwargs)

    return gated


@require_POST
@sharing_on
@login_required
def create_link(request: HttpRequest, session_id: str) -> JsonResponse:
    """Fields: ``follow`` (``"1"``: the link follows the conversation; else a snapshot up
    to its newest item), ``show_tools`` (``"1"``: tool calls and outputs are shown),
    ``expires`` (a key of ``EXPIRIES``). The answer: ``{"url", "token"}``."""
    expires = request.POST.get("expires", "")
    if expires not in EXPIRIES:
        return JsonResponse({"error": _("Choose how long the link lasts.")}, status=400)
    life = EXPIRIES[expires]
    try:
        link = sharing.create_link(
            request.user.pk,
            session_id,
            follow=request.POST.get("follow") == "1",
            show_tools=request.POST.get("show_tools") == "1",
            expires_at=timezone.now() + life if life else None,
        )
    except owned.NotFound:
        raise Http404(_("No such conversation.")) from None
    except sharing.NotShareable:
        message = _("A temporary chat, or one without messages, cannot be shared.")
        return JsonResponse({"error": message}, status=400)
    url = request.build_absolute_uri(reverse("django_agent_sessions:shared", args=[link.token]))
    return JsonResponse({"url": url, "token": link.token})


@require_GET
@sharing_on
@login_required
def links(request: HttpRequest) -> HttpResponse:
    """The person's links, newest first, each with its page and a Revoke button."""
    context = {"links": sharing.links_of(request.user.pk)}
    return render(request, "django_agent_sessions/share_links.html", context)


@require_POST
@sharing_on
@login_required
def revoke(request: HttpRequest, token: str) -> HttpResponse:
    """Revoke one's link: at once on every worker (each request checks the database).
    A fetch (``X-Requested-With: fetch``) gets JSON; a form, the list again."""
    if not sharing.revoke(request.user.pk, token):
        raise Http404(_("No such link."))
    if request.headers.get("X-Requested-With") == "fetch":
        return JsonResponse({"revoked": True})
    return redirect("django_agent_sessions:share_links")
