"""The AI SDK adapter's endpoints (``urls``), for ``DefaultChatTransport({api})``:

- ``POST chat``: a person's message, or approval decisions; the response is the run's
  UI message stream (``stream.ChatStream``), under Django's CSRF protection;
- ``GET  chat/<id>/stream``: the run in flight, replayed from its start (``resume: true``),
  or 204 when there is none;
- ``GET  chat/<id>/messages``: the conversation's history as ``UIMessage`` JSON, for
  ``useChat({messages})`` when a page opens;
- ``POST chat/<id>/cancel``: stop the run, for pages that keep runs going after a
  disconnect (``CONTINUE_RUNS_AFTER_DISCONNECT``) and so cannot stop one by aborting.

The visitor, ownership, rate limits, quotas and runs are the HTTP transport's
(``sse.visitor``, ``streaming.actions``). A refused visitor gets a status (401, 403); a
refused request gets the wire's error code in an ``error`` chunk of a stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_GET, require_POST

from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.protocols.ai_sdk import messages as ui
from django_agent_sessions.protocols.ai_sdk import requests
from django_agent_sessions.protocols.ai_sdk.parts import PartWriter, error_text
from django_agent_sessions.protocols.ai_sdk.stream import DONE, ChatStream, chunk_text
from django_agent_sessions.sse.following import response_channel
from django_agent_sessions.sse.views import detached
from django_agent_sessions.sse.visitor import Refused, visitor_for
from django_agent_sessions.streaming import Visitor, actions, frames, history

HEADERS = {
    "x-vercel-ai-ui-message-stream": "v1",  # the protocol's version, as the SDK's servers say
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # nginx: write each chunk as it comes
    "Content-Encoding": "",  # keeps GZipMiddleware away: it would hold chunks back
}
_REFUSED_TEXT = {
    401: gettext_lazy("Please log in again."),
    403: gettext_lazy("This conversation is not yours."),
}


@require_POST
@csrf_protect  # whatever the project's middleware
async def chat(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    try:
        asked = requests.chat_request(_body(request))
        visitor = await detached(visitor_for(request, asked.chat_id))
    except Refused as refused:
        return _refused(refused.status)
    except frames.BadFrame as bad:
        return _error_stream(bad)
    channel_name = await response_channel(visitor, "ai_sdk")
    stream = ChatStream(visitor, channel_name, PartWriter(asked.known_calls))
    try:
        await stream.open()
        await stream.act(lambda: detached(_act(visitor, asked)))
    except SessionOwnershipError:
        await stream.aclose()
        return _refused(403)  # someone else created this id meanwhile
    except frames.BadFrame as bad:
        await stream.aclose()
        return _error_stream(bad)
    return _streaming(stream)


async def _act(visitor: Visitor, asked: requests.ChatRequest) -> None:
    if asked.message is not None:
        return await actions.send_message(visitor, asked.message)
    for decision in asked.decisions:  # the last one resumes the run
        await actions.decide(visitor, decision)


@require_GET
async def resume(request: HttpRequest, chat_id: str) -> HttpResponse | StreamingHttpResponse:
    try:
        visitor = await detached(visitor_for(request, chat_id))
    except Refused as refused:
        return _refused(refused.status)
    channel_name = await response_channel(visitor, "ai_sdk")
    stream = ChatStream(visitor, channel_name, PartWriter(), resume=True)
    try:
        await stream.open()
    except SessionOwnershipError:
        await stream.aclose()
        return _refused(403)
    if not stream.following:
        await stream.aclose()
        return HttpResponse(status=204)  # no run in flight: the client has it all
    return _streaming(stream)


@require_GET
async def messages(request: HttpRequest, chat_id: str) -> JsonResponse:
    try:
        visitor = await detached(visitor_for(request, chat_id))
    except Refused as refused:
        return _refused(refused.status)
    items, pending = await detached(_stored(visitor.conversation_pk))

    def file_url(file: dict[str, Any]) -> str | None:
        try:  # the packaged chat's download, when the project mounts it
            return reverse("django_agent_sessions:attachment", args=[chat_id, file["id"]])
        except NoReverseMatch:
            return None

    return JsonResponse(ui.ui_messages(items, pending, file_url=file_url), safe=False)


async def _stored(conversation_pk: int | None) -> tuple[list[Any], list[Any]]:
    """Every stored item, oldest first (a page of the history at a time), and the
    calls that wait for a decision."""
    if conversation_pk is None:
        return [], []
    got: list[dict[str, Any]] = []
    keep: Callable[[dict[str, Any]], Awaitable[None]] = _appender(got)
    newest = await history.load(conversation_pk, up_to_item_id=None)
    await history.send_frame(keep, conversation_pk, newest, None)
    items, pending = got[-1]["items"], got[-1]["pending_approvals"]
    while got[-1]["has_more"] and got[-1]["oldest_id"] is not None:
        await history.send_page(keep, conversation_pk, got[-1]["oldest_id"])
        items = got[-1]["items"] + items
    return items, pending


def _appender(got: list[dict[str, Any]]) -> Callable[[dict[str, Any]], Awaitable[None]]:
    async def keep(frame: dict[str, Any]) -> None:
        got.append(frame)

    return keep


@require_POST
@csrf_protect  # whatever the project's middleware
async def cancel(request: HttpRequest, chat_id: str) -> JsonResponse:
    try:
        content = {**frames.decode_object(_body(request) or "{}", 1024), "type": "cancel"}
        visitor = await detached(visitor_for(request, chat_id))
        await detached(actions.cancel(visitor, content))
    except Refused as refused:
        return _refused(refused.status)
    except frames.BadFrame as bad:
        return JsonResponse(frames.error_frame(bad.code, bad.message), status=400)
    return JsonResponse({"accepted": "cancel"}, status=202)


def _streaming(body: Any) -> StreamingHttpResponse:
    response = StreamingHttpResponse(body, content_type="text/event-stream; charset=utf-8")
    for name, value in HEADERS.items():
        response[name] = value
    return response


def _error_stream(bad: frames.BadFrame) -> StreamingHttpResponse:
    """A refused request: the wire's error code in the protocol's ``error`` chunk."""
    chunk = chunk_text({"type": "error", "errorText": error_text(bad.code, bad.message)})
    response = _streaming(_written(chunk, DONE))
    if "retry_after" in bad.fields:
        response["Retry-After"] = str(max(1, round(float(bad.fields["retry_after"]))))
    return response


async def _written(*chunks: str) -> AsyncIterator[str]:
    for chunk in chunks:  # (an async body: Django would warn about a sync one under ASGI)
        yield chunk


def _body(request: HttpRequest) -> str:
    try:
        return request.body.decode("utf-8")
    except UnicodeDecodeError:
        return ""  # not JSON: refused as the wire refuses it


def _refused(status: int) -> JsonResponse:
    return JsonResponse({"error": str(_REFUSED_TEXT[status])}, status=status)
