"""A conversation's stored files, served to its owner only (``files.serving``): someone
else's file answers 404, exactly like one that does not exist."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest
from django.views.decorators.http import require_GET

from django_agent_sessions.files.serving import file_response
from django_agent_sessions.store import attachments


@require_GET
@login_required
def attachment(request: HttpRequest, session_id: str, attachment_id: int) -> FileResponse:
    found = attachments.owned_file(session_id, attachment_id, request.user.pk)
    return file_response(found, request, download=request.GET.get("download") == "1")
