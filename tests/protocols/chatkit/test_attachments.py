"""``DjangoChatKitAttachmentStore`` hands out two-phase uploads to the adapter's own
URLs, absolute as ChatKit requires; an image gets a preview URL; too large is refused."""

from __future__ import annotations

import pytest
from chatkit.types import AttachmentCreateParams, FileAttachment, ImageAttachment
from django.contrib.auth.models import AnonymousUser
from django.test import RequestFactory

from django_agent_sessions.protocols.chatkit import ChatKitContext, DjangoChatKitAttachmentStore

STORE: DjangoChatKitAttachmentStore = DjangoChatKitAttachmentStore()


def _context() -> ChatKitContext:
    return ChatKitContext(user=AnonymousUser(), request=RequestFactory().post("/chatkit/"))


async def test_a_file_gets_an_upload_url_and_an_image_a_preview_too():
    asked = AttachmentCreateParams(name="notes.txt", size=10, mime_type="text/plain")
    document = await STORE.create_attachment(asked, _context())
    assert isinstance(document, FileAttachment)
    assert document.upload_descriptor is not None
    assert str(document.upload_descriptor.url) == (
        f"http://testserver/chatkit/attachments/{document.id}/upload"
    )
    assert document.upload_descriptor.method == "POST"
    asked = AttachmentCreateParams(name="cat.png", size=10, mime_type="image/png")
    image = await STORE.create_attachment(asked, _context())
    assert isinstance(image, ImageAttachment)
    assert str(image.preview_url) == f"http://testserver/chatkit/attachments/{image.id}"
    assert image.id.startswith("atc_")
    assert image.id != document.id


async def test_a_file_over_the_upload_limit_or_without_a_request_is_refused(settings):
    settings.AGENT_SESSIONS = {"ATTACHMENTS": {"MAX_UPLOAD_BYTES": 9}}
    asked = AttachmentCreateParams(name="notes.txt", size=10, mime_type="text/plain")
    with pytest.raises(ValueError, match="too large"):
        await STORE.create_attachment(asked, _context())
    small = AttachmentCreateParams(name="notes.txt", size=9, mime_type="text/plain")
    with pytest.raises(ValueError, match="needs the request"):
        await STORE.create_attachment(small, ChatKitContext(user=AnonymousUser()))
