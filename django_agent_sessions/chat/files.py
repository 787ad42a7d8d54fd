"""A conversation's stored files, served to its owner only.

Images the app recognises (PNG, JPEG, GIF, WebP, by their bytes) are shown inline;
everything else, HTML and SVG included whatever their name, is a download of
``application/octet-stream``. Every response forbids the browser to guess another type
(``nosniff``) and sandboxes whatever it renders; someone else's file answers 404, exactly
like one that does not exist.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from django_agent_sessions.files import storage
from django_agent_sessions.files.sniffing import OCTET_STREAM
from django_agent_sessions.store import attachments

INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
# Files never change (one name holds one SHA-256's bytes): the browser may keep them.
CACHE_CONTROL = "private, max-age=31536000, immutable"


@require_GET
@login_required
def attachment(request: HttpRequest, session_id: str, attachment_id: int) -> FileResponse:
    found = attachments.owned_file(session_id, attachment_id, request.user.pk)
    if found is None:
        raise Http404(_("No such file."))
    try:
        opened = storage.storage().open(found.storage_name, "rb")
    except FileNotFoundError:
        raise Http404(_("No such file.")) from None
    inline = found.content_type in INLINE_TYPES
    response = FileResponse(
        opened,
        content_type=found.content_type if inline else OCTET_STREAM,
        as_attachment=not inline,
        filename=found.name or f"attachment-{attachment_id}",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = CACHE_CONTROL
    return response
