"""The HTTP transport's endpoints, under the chat's URLs (``django_agent_sessions.urls``):

- ``GET  c/<session_id>/events/``: the conversation's stream (``stream.EventStream``);
- ``POST c/<session_id>/messages/``, ``cancel/``, ``approvals/<call_id>/``,
  ``queue/<id>/`` and ``queue/<id>/remove/``: the client frames ``user_message``,
  ``cancel``, ``approval``, ``queue_edit`` and ``queue_remove`` as JSON bodies (without
  ``type``), under Django's CSRF protection;
- ``GET  c/<session_id>/older/?before=<item id>``: the ``history.page`` of ``load_older``.

A POST answers 202 once the frame took effect, or the websocket's ``error`` frame as the
body with a status (``ERROR_STATUS``). A POST's work runs in a context of its own: the
run it starts outlives the request (see ``detached``).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.translation import get_language, gettext_lazy, override
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_GET, require_POST

from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.sse.following import response_channel
from django_agent_sessions.sse.stream import EventStream
from django_agent_sessions.sse.visitor import Refused, visitor_for
from django_agent_sessions.streaming import Visitor, actions, frames, history, queueing, replay

_T = TypeVar("_T")
logger = logging.getLogger(__name__)

ERROR_STATUS = {
    "too_large": 413,
    "busy": 409,
    "rate_limited": 429,
    "quota_exceeded": 429,
    "unknown_approval": 404,
    "not_found": 404,
    "unknown_queued": 404,
    "queue_full": 409,
    "unavailable": 503,
}  # every other code (a malformed frame) is 400
_REFUSED_TEXT = {
    401: gettext_lazy("Please log in again."),
    403: gettext_lazy("This conversation is not yours."),
}


@require_GET
async def events(request: HttpRequest, session_id: str) -> HttpResponseBase:
    try:
        visitor = await detached(visitor_for(request, session_id))
    except Refused as refused:
        return _refused(refused.status)
    channel_name = await response_channel(visitor, "stream")
    response = StreamingHttpResponse(
        EventStream(visitor, channel_name, replay.position(request.headers.get("Last-Event-ID"))),
        content_type="text/event-stream; charset=utf-8",
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: write each event as it comes
    # An empty Content-Encoding keeps GZipMiddleware away: it would hold events back.
    response["Content-Encoding"] = ""
    return response


@require_POST
@csrf_protect  # whatever the project's middleware
async def messages(request: HttpRequest, session_id: str) -> HttpResponse:
    return await _frame(request, session_id, "user_message", actions.send_from_chat)


@require_POST
@csrf_protect  # whatever the project's middleware
async def cancel(request: HttpRequest, session_id: str) -> HttpResponse:
    return await _frame(request, session_id, "cancel", actions.cancel)


@require_POST
@csrf_protect  # whatever the project's middleware
async def approval(request: HttpRequest, session_id: str, call_id: str) -> HttpResponse:
    return await _frame(request, session_id, "approval", actions.decide, call_id=call_id)


@require_POST
@csrf_protect  # whatever the project's middleware
async def queue_edit(request: HttpRequest, session_id: str, queued_id: int) -> HttpResponse:
    return await _frame(request, session_id, "queue_edit", queueing.edit, id=queued_id)


@require_POST
@csrf_protect  # whatever the project's middleware
async def queue_remove(request: HttpRequest, session_id: str, queued_id: int) -> HttpResponse:
    return await _frame(request, session_id, "queue_remove", queueing.remove, id=queued_id)


@require_GET
async def older(request: HttpRequest, session_id: str) -> HttpResponse:
    try:
        visitor = await detached(visitor_for(request, session_id))
        before = frames.load_older({"before": _integer(request.GET.get("before"))})
    except Refused as refused:
        return _refused(refused.status)
    except frames.BadFrame as bad:
        return _error(bad)
    page: list[dict[str, Any]] = []

    async def keep(frame: dict[str, Any]) -> None:
        page.append(frame)

    await detached(history.send_page(keep, visitor.conversation_pk, before))
    return JsonResponse(page[0])


# An action's result: the sender's own frame (``steer.accepted``), or None.
Action = Callable[[Visitor, dict[str, Any]], Coroutine[Any, Any, dict[str, Any] | None]]


async def _frame(
    request: HttpRequest, session_id: str, kind: str, action: Action, **fields: Any
) -> HttpResponse:
    try:
        content = {**frames.decode_object(_body(request), app_settings.MAX_MESSAGE_BYTES)}
        content.update(type=kind, **fields)
        answer = await detached(_act(request, session_id, action, content))
    except Refused as refused:
        return _refused(refused.status)
    except SessionOwnershipError:
        return _refused(403)  # someone else created this id since the page opened it
    except frames.BadFrame as bad:
        return _error(bad)
    return JsonResponse({"accepted": kind, **(answer or {})}, status=202)


async def _act(
    request: HttpRequest, session_id: str, action: Action, content: dict[str, Any]
) -> dict[str, Any] | None:
    return await action(await visitor_for(request, session_id), content)


async def detached(work: Coroutine[Any, Any, _T]) -> _T:
    """``work`` in a context of its own, finished even if the client goes away.

    All of this transport's database work runs so, on asgiref's one shared thread and
    its one connection, as the websocket consumers' does. In the request's context it
    would run on the request's own thread, with a connection of its own: 200 open
    streams and their POSTs held 400 connections (the benchmark met PostgreSQL's
    max_connections), and a run outliving its request would get a new thread, and a
    connection never closed, for each later hop. The request's language goes along
    (error messages are translated into it).
    """
    loop = asyncio.get_running_loop()
    task = contextvars.Context().run(loop.create_task, _in_language(get_language(), work))
    _detached.add(task)  # held until done, even when the request is gone
    task.add_done_callback(_forget)
    return await asyncio.shield(task)


_detached: set[asyncio.Task[Any]] = set()


async def _in_language(language: str | None, work: Coroutine[Any, Any, _T]) -> _T:
    if language is None:
        return await work
    with override(language):
        return await work


def _forget(task: asyncio.Task[Any]) -> None:
    _detached.discard(task)
    if not task.cancelled() and task.exception() is not None:
        # Seen by the request when it waited for it; logged here when it had gone.
        logger.debug("Detached work ended with %r.", task.exception())


def _body(request: HttpRequest) -> str:
    try:
        return request.body.decode("utf-8")
    except UnicodeDecodeError:
        raise frames.BadFrame("invalid_json", _("The frame is not valid JSON.")) from None


def _integer(value: str | None) -> Any:
    try:
        return int(value or "")
    except ValueError:
        return value


def _error(bad: frames.BadFrame) -> JsonResponse:
    frame = frames.error_frame(bad.code, bad.message, bad.client_id, **bad.fields)
    response = JsonResponse(frame, status=ERROR_STATUS.get(bad.code, 400))
    if "retry_after" in bad.fields:
        response["Retry-After"] = str(max(1, round(float(bad.fields["retry_after"]))))
    return response


def _refused(status: int) -> JsonResponse:
    return JsonResponse({"error": str(_REFUSED_TEXT[status])}, status=status)
