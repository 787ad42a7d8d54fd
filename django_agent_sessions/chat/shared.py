"""A share link's page, its files, and "continue as a copy" (``share/<token>/...``).

Who may do what (docs/conversations.md, "Share links", has the table): with
``SHARE_LINKS = "off"`` every URL here answers 404; with ``"login"`` a visitor who is
not signed in goes to the login page (before the token is looked up: a visitor learns
nothing about it); with ``"public"`` anyone may read. Continuing as a copy always needs a
signed-in person. A revoked, expired or unknown token answers 404, all alike. The owner
and staff follow the same rules as anyone: a link is the only way in here.

The page is read-only and says so to robots twice (``<meta name="robots">`` and
``X-Robots-Tag``), under a strict Content-Security-Policy of its own: it runs no script
and loads only this site's styles and images.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from django_agent_sessions.admin.transcript import Entry, entry, tool_calls
from django_agent_sessions.chat.views import new_session_id
from django_agent_sessions.files.serving import file_response
from django_agent_sessions.sharing.settings import mode
from django_agent_sessions.store import sharing, uploads

POLICY = "; ".join(
    [
        "default-src 'none'",
        "style-src 'self'",
        "img-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)
NOINDEX = "noindex, nofollow"


def _gate(request: HttpRequest) -> HttpResponse | None:
    """404 while sharing is off; the login page for a visitor when links need one."""
    setting = mode()
    if setting == "off":
        raise Http404(_("No such link."))
    if setting == "login" and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return None


def _private(response: HttpResponse) -> HttpResponse:
    response["X-Robots-Tag"] = NOINDEX
    response["Referrer-Policy"] = "same-origin"  # the token stays out of other sites' logs
    response["Cache-Control"] = "private, no-store"  # a revoke shows at once
    return response


@require_GET
def shared(request: HttpRequest, token: str) -> HttpResponse:
    """The conversation as the link shows it, read-only."""
    refused = _gate(request)
    if refused is not None:
        return _private(refused)
    found = sharing.find(token)
    if found is None:
        raise Http404(_("No such link."))
    context = {
        "link": found,
        "entries": _entries(found),
        "signed_in": request.user.is_authenticated,
    }
    response = render(request, "django_agent_sessions/shared.html", context)
    response["Content-Security-Policy"] = POLICY
    return _private(response)


def _entries(found: sharing.Shared) -> list[Entry]:
    rows = sharing.shown_rows(found)
    names, _answered = tool_calls(payload for _pk, _at, payload in rows)
    files = uploads.files_by_item(found.conversation_pk, rows)
    return [entry(pk, at, payload, names, files.get(pk, ())) for pk, at, payload in rows]


@require_GET
def shared_file(request: HttpRequest, token: str, attachment_id: int) -> Any:
    """A file the link's page shows; any other answers 404 (``store.sharing``)."""
    refused = _gate(request)
    if refused is not None:
        return _private(refused)
    found = sharing.shared_file(token, attachment_id)
    response: FileResponse = file_response(
        found, request, download=request.GET.get("download") == "1"
    )
    response["Cache-Control"] = "private, no-store"  # not kept past a revoke
    response["X-Robots-Tag"] = NOINDEX
    return response


@require_POST
def continue_as_copy(request: HttpRequest, token: str) -> HttpResponse:
    """A new conversation of the signed-in person's, holding what the link shows; the
    chat opens it."""
    if mode() == "off":
        raise Http404(_("No such link."))
    if not request.user.is_authenticated:  # back to the link's page once signed in
        return redirect_to_login(reverse("django_agent_sessions:shared", args=[token]))
    new_id = new_session_id()
    if not sharing.continue_as_copy(token, request.user.pk, new_id):
        raise Http404(_("No such link."))
    return redirect("django_agent_sessions:conversation", session_id=new_id)
