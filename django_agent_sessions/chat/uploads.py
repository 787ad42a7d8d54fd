"""``POST c/<session_id>/files/``: the signed-in person gives the chat a file.

A multipart form with one ``file``. The answer is the stored file (201:
``{"id", "name", "content_type", "size", "url"}``), whose ``id`` a ``user_message``
then names in its ``files``; or ``{"error", "code"}``: 413 ``too_large`` (checked on
the request's length, before anything is read), 415 ``type_refused`` (the type is sniffed
from the bytes, never taken from the name or the browser), 429 ``rate_limited``, 507
``quota_exceeded``, 400 ``no_file``; 404 for someone else's conversation. Django's CSRF
protection covers it like the page's other POSTs.

An upload that does not finish leaves nothing: Django keeps the request's bytes in
memory or a temporary file it deletes, and a storage or database failure deletes what
was written (``store.uploads.accept``). A file no message ever names is an orphan that
``manage.py agent_sessions_files --delete`` removes after its grace period.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, JsonResponse
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from django_agent_sessions.exceptions import SessionOwnershipError, UploadRefused
from django_agent_sessions.files import sniffing, storage
from django_agent_sessions.store import uploads

# Room for the multipart form's own headers around the file.
_FORM_OVERHEAD = 16 * 1024
_STATUS = {"too_large": 413, "type_refused": 415, "rate_limited": 429, "quota_exceeded": 507}


@require_POST
@login_required
def upload(request: HttpRequest, session_id: str) -> JsonResponse:
    try:
        name, data = _read_file(request)
        stored = uploads.accept(
            request.user, session_id, name=name, data=data, content_type=_allowed_type(data)
        )
    except UploadRefused as refused:
        status = _STATUS.get(refused.code, 400)
        return JsonResponse({"error": str(refused), "code": refused.code}, status=status)
    except SessionOwnershipError:
        raise Http404(_("No such conversation.")) from None
    url = reverse("django_agent_sessions:attachment", args=[session_id, stored.id])
    return JsonResponse({**stored.wire(), "url": url}, status=201)


def _read_file(request: HttpRequest) -> tuple[str, bytes]:
    most = int(storage.setting("MAX_UPLOAD_BYTES"))
    if int(request.META.get("CONTENT_LENGTH") or 0) > most + _FORM_OVERHEAD:
        raise _too_large(most)
    given: Any = request.FILES.get("file")
    if given is None:
        raise UploadRefused("no_file", _("Send one file, in the form field “file”."))
    if given.size > most:
        raise _too_large(most)
    with given:
        return str(given.name or ""), bytes(given.read())


def _too_large(most: int) -> UploadRefused:
    message = _("A file may be %(size)s at most.") % {"size": filesizeformat(most)}
    return UploadRefused("too_large", message)


def _allowed_type(data: bytes) -> str:
    content_type = sniffing.content_type(data)
    if content_type not in storage.setting("UPLOAD_TYPES"):
        message = _("This kind of file cannot be sent (it is %(type)s).") % {"type": content_type}
        raise UploadRefused("type_refused", message)
    return content_type
