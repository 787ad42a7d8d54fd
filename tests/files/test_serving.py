"""A stored file as a response (``files/serving.py``): recognised images inline, anything
else a download of ``application/octet-stream``, never sniffed, always sandboxed."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.http import Http404

from django_agent_sessions.files import storage
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.files.serving import CACHE_CONTROL, file_response
from tests.attachment_helpers import png


def _stored(file_storage: object, name: str, content_type: str, data: bytes) -> Attachment:
    stored_as = storage.storage().save(f"files/{name or 'nameless'}", ContentFile(data))
    return Attachment(pk=7, name=name, content_type=content_type, storage_name=stored_as)


def _body(response: object) -> bytes:
    return b"".join(response.streaming_content)  # type: ignore[attr-defined]


def test_an_image_is_shown_inline_unless_a_download_is_asked_for(file_storage):
    data = png(2, 2)
    image = _stored(file_storage, "cat.png", "image/png", data)
    shown = file_response(image)
    assert shown["Content-Type"] == "image/png"
    assert shown["Content-Disposition"].startswith("inline")
    assert _body(shown) == data
    downloaded = file_response(image, download=True)
    assert downloaded["Content-Type"] == "application/octet-stream"
    assert downloaded["Content-Disposition"] == 'attachment; filename="cat.png"'
    for response in (shown, downloaded):
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Security-Policy"] == "default-src 'none'; sandbox"
        assert response["Cache-Control"] == CACHE_CONTROL
        response.file_to_stream.close()  # type: ignore[attr-defined]


def test_html_is_a_download_whatever_its_type_and_a_nameless_file_gets_one(file_storage):
    page = _stored(file_storage, "", "text/html", b"<script>alert(1)</script>")
    response = file_response(page)
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == 'attachment; filename="attachment-7"'
    response.file_to_stream.close()  # type: ignore[attr-defined]


def test_no_row_or_a_missing_file_is_404(file_storage):
    with pytest.raises(Http404):
        file_response(None)
    gone = Attachment(pk=8, name="x.png", content_type="image/png", storage_name="files/gone.png")
    with pytest.raises(Http404):
        file_response(gone)
