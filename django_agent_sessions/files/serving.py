"""A stored file as an HTTP response, the same for its owner (the chat) and for staff
(the admin's transcript).

Images the app recognises (PNG, JPEG, GIF, WebP, by their bytes) are shown inline;
everything else, HTML and SVG included whatever their name, is a download of
``application/octet-stream``. Every response forbids the browser to guess another type
(``nosniff``) and sandboxes whatever it renders. Under ASGI the bytes are read a chunk at
a time in a worker thread: Django reads a file it is given as a sync iterator into one
list before sending it (the whole file in memory, and a warning at each download).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import IO

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, Http404, HttpRequest
from django.utils.translation import gettext as _

from django_agent_sessions.files import storage
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.files.sniffing import OCTET_STREAM

INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
# Files never change (one name holds one SHA-256's bytes): the browser may keep them.
CACHE_CONTROL = "private, max-age=31536000, immutable"
#: What one read of a file streamed under ASGI takes.
CHUNK_BYTES = 64 * 1024


def file_response(
    found: Attachment | None, request: HttpRequest, *, download: bool = False
) -> FileResponse:
    """``found``'s bytes (404 when it is None or its file is gone), as ``request``'s
    server streams them; ``download`` makes even an image a download."""
    if found is None:
        raise Http404(_("No such file."))
    try:
        opened = storage.storage().open(found.storage_name, "rb")
    except FileNotFoundError:
        raise Http404(_("No such file.")) from None
    inline = found.content_type in INLINE_TYPES and not download
    response = FileResponse(
        opened,
        content_type=found.content_type if inline else OCTET_STREAM,
        as_attachment=not inline,
        filename=found.name or f"attachment-{found.pk}",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = CACHE_CONTROL
    if isinstance(request, ASGIRequest):
        # Headers (length, name) are set from the file already; the response still
        # closes it once sent.
        response.streaming_content = _chunks(opened)
    return response


async def _chunks(opened: IO[bytes]) -> AsyncIterator[bytes]:
    read = sync_to_async(opened.read, thread_sensitive=False)
    while chunk := await read(CHUNK_BYTES):
        yield chunk
