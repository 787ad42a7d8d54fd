"""The chat page and the small JSON API its sidebar and buttons use.

Conversations are ``AgentSession`` rows owned by the signed-in user. A new conversation
is only an id until its first message: opening the page (or its socket) writes nothing,
and the websocket's first ``user_message`` creates the row. Someone else's conversation
answers 404, exactly like one that does not exist. Every unsafe method is a POST under
Django's CSRF protection (the page sends the token in ``X-CSRFToken``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from django_agent_sessions import item_views
from django_agent_sessions.chat.budget import budget_of
from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.transports import chat_transport
from django_agent_sessions.files import storage as file_storage
from django_agent_sessions.models import SESSION_ID_MAX_LENGTH
from django_agent_sessions.sharing.settings import enabled as sharing_enabled
from django_agent_sessions.store import feedback, keeping, owned, temporary
from django_agent_sessions.temporary.settings import forced_for

#: The sidebar lists this many most recently active conversations.
SIDEBAR_LIMIT = 50
#: Where the page's socket connects (``routing.websocket_urlpatterns``).
SOCKET_PATH = "/ws/agent-sessions/{session_id}/"
TITLE_MAX_LENGTH = 255
_T = TypeVar("_T")


def new_session_id() -> str:
    return uuid.uuid4().hex


@require_GET
@login_required
def chat(request: HttpRequest) -> HttpResponseRedirect:
    """Open the user's latest conversation, or a new (unsaved) one."""
    latest = owned.latest_of(request.user)
    return redirect("django_agent_sessions:conversation", session_id=latest or new_session_id())


@require_GET
@login_required
def new_conversation(request: HttpRequest) -> HttpResponseRedirect:
    # Writes nothing, so GET is safe: the conversation exists once it has a message.
    # ``?temporary=1``: a temporary chat (its first message says so: store.temporary).
    url = reverse("django_agent_sessions:conversation", args=[new_session_id()])
    return redirect(url + ("?temporary=1" if request.GET.get("temporary") == "1" else ""))


@require_GET
@login_required
@ensure_csrf_cookie  # the page's script sends it back in X-CSRFToken
def conversation(request: HttpRequest, session_id: str) -> HttpResponse:
    _check_session_id(session_id)
    current = owned.find(session_id)
    if current is not None and current[0] != request.user.pk:
        raise Http404(_("No such conversation."))
    context = {
        "session_id": session_id,
        "title": current[1] if current is not None else "",
        "saved": current is not None,
        "conversations": conversations_of(request.user),
        "agents": keeping.agents_of(request.user.pk),  # the sidebar's filter (keeping.js)
        "socket_path": SOCKET_PATH.format(session_id=session_id),
        "transport": chat_transport(),
        "feedback_tags": json.dumps(feedback.allowed_tags()),  # the rating form's (ratings.js)
        "uploads": _upload_limits(),  # what the attach button takes (attachments.js)
        # A branch (store.branches) names its original under its title.
        "origin": owned.origin_of(session_id) if current is not None else None,
        "budget": budget_of(request.user),  # QUOTAS["SHOW_REMAINING"] (budget.js)
        "share_links": sharing_enabled(),  # the Share action (sharing.js)
        # Send stays offered during a reply, which it stops, joins or queues behind
        # (WHILE_RUNNING, chat.js, queue.js).
        "while_running": _sending_while_running(),
        # A temporary chat is marked as one; a new one's first message asks for it.
        "temporary_forced": (forced := forced_for(request.user)),
        "temporary": temporary.is_temporary(session_id)
        if current is not None
        else forced or request.GET.get("temporary") == "1",
    }
    return render(request, "django_agent_sessions/chat.html", context)


def _sending_while_running() -> str:
    """The ``WHILE_RUNNING`` mode the page offers Send in during a reply ("" for busy)."""
    mode = app_settings.WHILE_RUNNING
    return mode if mode in ("interrupt", "queue", "steer") else ""


def _upload_limits() -> dict[str, Any]:
    types = list(file_storage.setting("UPLOAD_TYPES"))
    return {
        "types": " ".join(types),
        "accept": ",".join(types),  # the file picker's filter
        "max_bytes": file_storage.setting("MAX_UPLOAD_BYTES"),
        "max_files": file_storage.setting("MAX_FILES_PER_MESSAGE"),
    }


@require_GET
@login_required
def conversation_list(request: HttpRequest) -> JsonResponse:
    """The sidebar's data: the user's conversations, pinned first, then most recently
    active; ``?archived=1`` with the archived ones, ``?agent=<name>`` only that agent's."""
    archived = request.GET.get("archived") == "1"
    agent = request.GET.get("agent", "")[:255] or None
    return JsonResponse(
        {
            "conversations": conversations_of(request.user, archived=archived, agent=agent),
            "agents": keeping.agents_of(request.user.pk),
        }
    )


@require_POST
@login_required
def rename_conversation(request: HttpRequest, session_id: str) -> JsonResponse:
    title = " ".join(request.POST.get("title", "").split())
    if not title:
        return JsonResponse({"error": _("A title cannot be empty.")}, status=400)
    if len(title) > TITLE_MAX_LENGTH:
        return JsonResponse(
            {"error": _("A title has at most %d characters.") % TITLE_MAX_LENGTH}, status=400
        )
    try:
        owned.rename(session_id, request.user, title)
    except owned.NotFound:
        raise Http404(_("No such conversation.")) from None
    return JsonResponse({"id": session_id, "title": title})


@require_POST
@login_required
def delete_conversation(request: HttpRequest, session_id: str) -> JsonResponse:
    """Delete the conversation, its items and its run records."""
    try:
        owned.delete(session_id, request.user)
    except owned.NotFound:
        raise Http404(_("No such conversation.")) from None
    except owned.Busy:
        return _busy()
    return JsonResponse({"deleted": session_id, "next": reverse("django_agent_sessions:new")})


@require_POST
def clear_conversation(request: HttpRequest, session_id: str) -> JsonResponse:
    """Delete the conversation's items; its row (owner, title) stays."""
    if not request.user.is_authenticated:
        return _logged_out()
    try:
        _owned(owned.clear, session_id, request.user)
    except owned.Busy:
        return _busy()
    return JsonResponse({"cleared": session_id})


@require_POST
def rewind_conversation(request: HttpRequest, session_id: str) -> JsonResponse:
    """Take back the last turn: the last user message and everything after it.

    This is the SDK's ``pop_item`` correction pattern, as one transaction. The page then
    sends the returned text again (regenerate) or an edited one (edit), so the session
    holds exactly what the model should see: the earlier turns, then the new one.
    """
    if not request.user.is_authenticated:
        return _logged_out()
    try:
        taken = _owned(owned.take_back_turn, session_id, request.user)
    except owned.Busy:
        return _busy()
    if not taken:
        return JsonResponse({"error": _("There is no message to take back.")}, status=409)
    return JsonResponse({"text": item_views.typed_text(taken[0]), "removed": len(taken)})


def _owned(action: Callable[[str, Any], _T], session_id: str, user: Any) -> _T:
    """``action`` on the user's conversation; Http404 for one that is missing or someone
    else's, ``owned.Busy`` while a run is live or waits for approval."""
    _check_session_id(session_id)
    try:
        return action(session_id, user)
    except owned.NotFound:
        raise Http404(_("No such conversation.")) from None


def _busy() -> JsonResponse:
    # Changing history under a running run would leave its later turns without their start.
    return JsonResponse({"error": _("A reply is still being written; stop it first.")}, status=409)


def _logged_out() -> JsonResponse:
    return JsonResponse({"error": _("Please log in again.")}, status=401)


def conversations_of(
    user: Any, *, archived: bool = False, agent: str | None = None
) -> list[dict[str, Any]]:
    return [
        {
            "id": row["session_id"],
            "title": row["title"] or _("Untitled conversation"),
            "updated_at": row["updated_at"].isoformat(),
            "pinned": row["pinned"],
            "archived": row["archived_at"] is not None,
            "url": reverse("django_agent_sessions:conversation", args=[row["session_id"]]),
        }
        for row in keeping.listed(user.pk, SIDEBAR_LIMIT, archived=archived, agent=agent)
    ]


def _check_session_id(session_id: str) -> None:
    if not session_id or len(session_id) > SESSION_ID_MAX_LENGTH:
        raise Http404(_("No such conversation."))
