"""ChatKit's endpoint, and its attachments' upload and download (``urls``).

- ``POST``: one ChatKit request (the client's ``api.url``): a streaming one is answered
  with Server-Sent Events as ChatKit's server writes them, the rest with JSON;
- ``POST attachments/<id>/upload``: the bytes of a file ChatKit registered (the upload
  URL of ``DjangoChatKitAttachmentStore``), as a multipart ``file`` field;
- ``GET attachments/<id>``: the file, to its owner (an image's preview URL).

Every request needs a signed-in user (401 otherwise) and Django's CSRF token, as the
app's other POSTs: ChatKit's client sends it when its ``fetch`` adds the header. A
thread or a file that is someone else's is not found (404), as a missing one.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from chatkit.server import ChatKitServer, StreamingResult
from chatkit.store import NotFoundError
from chatkit.types import ErrorEvent
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
    StreamingHttpResponse,
)
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_GET, require_POST

from django_agent_sessions.protocols.chatkit.context import ChatKitContext, owner_id
from django_agent_sessions.protocols.chatkit.server import AgentChatKitServer
from django_agent_sessions.store.chatkit import Missing, attachments

HEADERS = {
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # nginx: write each event as it comes
    "Content-Encoding": "",  # keeps GZipMiddleware away: it would hold events back
}
View = Callable[[HttpRequest], Coroutine[Any, Any, HttpResponseBase]]


def endpoint(server: Callable[[HttpRequest], ChatKitServer[Any]]) -> View:
    """An async view serving ChatKit's requests with the server ``server(request)``
    builds: ``path("chatkit", endpoint(lambda request: MyServer()))``."""

    @require_POST
    @csrf_protect  # whatever the project's middleware
    async def view(request: HttpRequest) -> HttpResponseBase:
        user = await request.auser()
        if not user.is_authenticated:
            return JsonResponse({"error": _("Please log in again.")}, status=401)
        context = ChatKitContext(user=user, request=request)
        try:
            result = await server(request).process(request.body, context)
        except NotFoundError:
            return JsonResponse({"error": _("Not found.")}, status=404)
        if isinstance(result, StreamingResult):
            events = _guarded(result)
            return StreamingHttpResponse(events, content_type="text/event-stream", headers=HEADERS)
        return HttpResponse(result.json, content_type="application/json")

    return view


async def _guarded(result: StreamingResult) -> AsyncIterator[bytes]:
    """The stream's events; a thread not found mid-stream (someone else's) ends it
    with ChatKit's own error event rather than a broken response."""
    try:
        async for event in result:
            yield event
    except NotFoundError:
        error = ErrorEvent(code="custom", message=_("Not found."), allow_retry=False)
        yield b"data: " + error.model_dump_json().encode() + b"\n\n"


chatkit = endpoint(lambda request: AgentChatKitServer())


@require_POST
@csrf_protect
async def upload(request: HttpRequest, attachment_id: str) -> HttpResponse:
    user = await request.auser()
    uploaded = request.FILES.get("file")
    if not user.is_authenticated:
        return JsonResponse({"error": _("Please log in again.")}, status=401)
    if uploaded is None:
        return JsonResponse({"error": _("No file was sent.")}, status=400)
    try:
        await attachments.upload(owner_id(ChatKitContext(user)), attachment_id, uploaded.read())
    except Missing:
        return JsonResponse({"error": _("Not found.")}, status=404)
    return JsonResponse({})


@require_GET
async def file(request: HttpRequest, attachment_id: str) -> HttpResponseBase:
    user = await request.auser()
    try:
        stored = await attachments.load(owner_id(ChatKitContext(user)), attachment_id)
        data = await attachments.read(stored.storage_name)
    except (Missing, FileNotFoundError):
        return JsonResponse({"error": _("Not found.")}, status=404)
    mime_type = json.loads(stored.payload).get("mime_type", "")
    image = mime_type in attachments.INLINE_TYPES
    response = HttpResponse(data, content_type=mime_type if image else "application/octet-stream")
    if not image:
        response["Content-Disposition"] = "attachment"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response
