"""The chat page and the small JSON API its sidebar and buttons use.

Conversations are ``AgentSession`` rows owned by the signed-in user. A new conversation
is only an id until its first message: opening the page (or its socket) writes nothing,
and the websocket's first ``user_message`` creates the row. Someone else's conversation
answers 404, exactly like one that does not exist. Every unsafe method is a POST under
Django's CSRF protection (the page sends the token in ``X-CSRFToken``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from django.contrib.auth.decorators import login_required
from django.db import connections, router, transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from django_agent_sessions.models import SESSION_ID_MAX_LENGTH, AgentRun, AgentSession
from django_agent_sessions.store import items as stored_items
from django_agent_sessions.store.conversations import delete_items_of
from django_agent_sessions.store.items import Scope

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
    latest = (
        AgentSession.objects.filter(owner=request.user)
        .order_by("-updated_at")
        .values_list("session_id", flat=True)
        .first()
    )
    return redirect("django_agent_sessions:conversation", session_id=latest or new_session_id())


@require_GET
@login_required
def new_conversation(request: HttpRequest) -> HttpResponseRedirect:
    # Writes nothing, so GET is safe: the conversation exists once it has a message.
    return redirect("django_agent_sessions:conversation", session_id=new_session_id())


@require_GET
@login_required
@ensure_csrf_cookie  # the page's script sends it back in X-CSRFToken
def conversation(request: HttpRequest, session_id: str) -> HttpResponse:
    _check_session_id(session_id)
    current = AgentSession.objects.filter(session_id=session_id).only("owner_id", "title").first()
    if current is not None and current.owner_id != request.user.pk:
        raise Http404(_("No such conversation."))
    context = {
        "session_id": session_id,
        "title": current.title if current is not None else "",
        "saved": current is not None,
        "conversations": _conversations_of(request.user),
        "socket_path": SOCKET_PATH.format(session_id=session_id),
    }
    return render(request, "django_agent_sessions/chat.html", context)


@require_GET
@login_required
def conversation_list(request: HttpRequest) -> JsonResponse:
    """The sidebar's data: the user's conversations, most recently active first."""
    return JsonResponse({"conversations": _conversations_of(request.user)})


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
    updated = AgentSession.objects.filter(session_id=session_id, owner=request.user).update(
        title=title
    )
    if not updated:
        raise Http404(_("No such conversation."))
    return JsonResponse({"id": session_id, "title": title})


@require_POST
@login_required
def delete_conversation(request: HttpRequest, session_id: str) -> JsonResponse:
    """Delete the conversation, its items and its run records."""
    using = router.db_for_write(AgentSession)
    with transaction.atomic(using=using):
        found = _lock_owned(session_id, request.user, using)
        if _has_live_run(found):
            return _busy()
        # One DELETE for the items (never loaded), then the row and its run records.
        delete_items_of(connections[using], [found])
        AgentSession.objects.using(using).filter(pk=found).delete()
    return JsonResponse({"deleted": session_id, "next": reverse("django_agent_sessions:new")})


@require_POST
def clear_conversation(request: HttpRequest, session_id: str) -> JsonResponse:
    """Delete the conversation's items; its row (owner, title) stays."""
    if not request.user.is_authenticated:
        return _logged_out()
    try:
        _change_owned(session_id, request.user, stored_items.clear)
    except _Busy:
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
        taken = _change_owned(session_id, request.user, stored_items.take_back_last_turn)
    except _Busy:
        return _busy()
    if not taken:
        return JsonResponse({"error": _("There is no message to take back.")}, status=409)
    return JsonResponse({"text": _message_text(taken[0]), "removed": len(taken)})


class _Busy(Exception):
    """The conversation has a live run: its history must not change under it."""


def _change_owned(session_id: str, user: Any, change: Callable[[Scope], _T]) -> _T:
    """``change`` the user's conversation, in one transaction with the live-run check.

    Raises Http404 for a conversation that does not exist or is someone else's, and
    _Busy while a run is live (the row lock keeps one from starting meanwhile).
    """
    _check_session_id(session_id)
    using = router.db_for_write(AgentSession)
    with transaction.atomic(using=using):
        if _has_live_run(_lock_owned(session_id, user, using)):
            raise _Busy
        return change(Scope(session_id, user.pk, using))


def _lock_owned(session_id: str, user: Any, using: str) -> int:
    """Lock the user's conversation row (in the caller's transaction); its primary key."""
    found = (
        AgentSession.objects.using(using)
        .select_for_update()
        .filter(session_id=session_id, owner=user)
        .values_list("pk", flat=True)
        .first()
    )
    if found is None:
        raise Http404(_("No such conversation."))
    return int(found)


def _message_text(item: Mapping[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = [
        part.get("text", "")
        for part in content or []
        if isinstance(part, Mapping) and isinstance(part.get("text"), str)
    ]
    return "".join(parts)


def _has_live_run(session_pk: int) -> bool:
    # A "running" run whose lease expired belongs to a worker that died: not live.
    return bool(AgentRun.objects.live(timezone.now()).filter(session_id=session_pk).exists())


def _busy() -> JsonResponse:
    # Changing history under a running run would leave its later turns without their start.
    return JsonResponse({"error": _("A reply is still being written; stop it first.")}, status=409)


def _logged_out() -> JsonResponse:
    return JsonResponse({"error": _("Please log in again.")}, status=401)


def _conversations_of(user: Any) -> list[dict[str, Any]]:
    rows = (
        AgentSession.objects.filter(owner=user)
        .order_by("-updated_at")
        .values("session_id", "title", "updated_at")[:SIDEBAR_LIMIT]
    )
    return [
        {
            "id": row["session_id"],
            "title": row["title"] or _("Untitled conversation"),
            "updated_at": row["updated_at"].isoformat(),
            "url": reverse("django_agent_sessions:conversation", args=[row["session_id"]]),
        }
        for row in rows
    ]


def _check_session_id(session_id: str) -> None:
    if not session_id or len(session_id) > SESSION_ID_MAX_LENGTH:
        raise Http404(_("No such conversation."))
