"""The chat page and the small HTTP API its sidebar uses.

Conversations are the app's ``AgentSession`` rows owned by the signed-in user. A new
conversation is only an id until its first message: the websocket's first run creates
the row (owned by the user, titled from that message).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from django_agent_sessions import DjangoSession
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import SESSION_ID_MAX_LENGTH, AgentSession
from example_project.chat.security import content_security_policy

SIDEBAR_LIMIT = 50


def new_session_id() -> str:
    return uuid.uuid4().hex


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponseRedirect:
    """Open the user's latest conversation, or a new one."""
    latest = (
        AgentSession.objects.filter(owner=request.user)
        .order_by("-updated_at")
        .values_list("session_id", flat=True)
        .first()
    )
    return redirect("chat:conversation", session_id=latest or new_session_id())


@require_GET
@login_required
def new_conversation(request: HttpRequest) -> HttpResponseRedirect:
    # Writes nothing, so GET is safe: the conversation exists once it has a message.
    return redirect("chat:conversation", session_id=new_session_id())


@require_GET
@login_required
@content_security_policy
def conversation(request: HttpRequest, session_id: str) -> HttpResponse:
    _check_session_id(session_id)
    current = AgentSession.objects.filter(session_id=session_id).only("owner_id", "title").first()
    if current is not None and current.owner_id != request.user.pk:
        # Someone else's conversation looks exactly like one that does not exist.
        raise Http404(_("No such conversation."))
    context = {
        "session_id": session_id,
        "title": current.title if current is not None else "",
        "conversations": _conversations_of(request),
        "socket_path": f"/ws/agent-sessions/{session_id}/",
    }
    return render(request, "chat/conversation.html", context)


@require_GET
@login_required
def conversation_list(request: HttpRequest) -> JsonResponse:
    """The sidebar's data: the user's conversations, most recently active first."""
    return JsonResponse({"conversations": _conversations_of(request)})


@require_POST
async def clear_conversation(request: HttpRequest, session_id: str) -> JsonResponse:
    """Delete the conversation's items; its row (owner, title) stays."""
    user = await request.auser()
    if not user.is_authenticated:
        return JsonResponse({"error": _("Please log in again.")}, status=401)
    _check_session_id(session_id)
    try:
        await DjangoSession(session_id, owner=user).clear_session()
    except SessionOwnershipError:
        raise Http404(_("No such conversation.")) from None
    return JsonResponse({"cleared": session_id})


def _conversations_of(request: HttpRequest) -> list[dict[str, Any]]:
    rows = (
        AgentSession.objects.filter(owner=request.user)
        .order_by("-updated_at")
        .values("session_id", "title", "updated_at")[:SIDEBAR_LIMIT]
    )
    return [
        {
            "id": row["session_id"],
            "title": row["title"] or _("Untitled conversation"),
            "updated_at": row["updated_at"].isoformat(),
            "url": reverse("chat:conversation", args=[row["session_id"]]),
        }
        for row in rows
    ]


def _check_session_id(session_id: str) -> None:
    if not session_id or len(session_id) > SESSION_ID_MAX_LENGTH:
        raise Http404(_("No such conversation."))
