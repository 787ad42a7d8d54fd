"""``DjangoChatKitAttachmentStore``: ChatKit's files in Django's storage, by two-phase
upload.

ChatKit's ``attachments.create`` asks for a file's record; the answer carries an upload
URL (``views.upload``) where the client then POSTs the bytes, which go to the storage
the app's attachments use (``AGENT_SESSIONS["ATTACHMENTS"]["STORAGE"]``). An image's
preview URL is ``views.file``, which serves it to its owner only. Sizes over
``MAX_UPLOAD_BYTES`` are refused when the record is asked for.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from chatkit.store import AttachmentStore
from chatkit.types import (
    Attachment,
    AttachmentCreateParams,
    AttachmentUploadDescriptor,
    FileAttachment,
    ImageAttachment,
)
from django.urls import reverse
from django.utils.translation import gettext as _
from pydantic import AnyUrl

from django_agent_sessions.protocols.chatkit.context import owner_id
from django_agent_sessions.store.chatkit import attachments

TContext = TypeVar("TContext")


class DjangoChatKitAttachmentStore(AttachmentStore[TContext], Generic[TContext]):
    """Files of ChatKit's threads; the context must carry the ``request`` (its URLs
    are absolute, as ChatKit requires) and the ``user``."""

    async def create_attachment(
        self, input: AttachmentCreateParams, context: TContext
    ) -> Attachment:
        if input.size > attachments.upload_limit():
            raise ValueError(_("This file is too large."))
        attachment_id = self.generate_attachment_id(input.mime_type, context)
        upload = AttachmentUploadDescriptor(
            url=AnyUrl(_absolute(context, "upload", attachment_id)), method="POST"
        )
        if input.mime_type.startswith("image/"):
            preview = AnyUrl(_absolute(context, "file", attachment_id))
            return ImageAttachment(
                id=attachment_id,
                name=input.name,
                mime_type=input.mime_type,
                upload_descriptor=upload,
                preview_url=preview,
            )
        return FileAttachment(
            id=attachment_id, name=input.name, mime_type=input.mime_type, upload_descriptor=upload
        )

    async def delete_attachment(self, attachment_id: str, context: TContext) -> None:
        """The record and its bytes (the store's ``delete_attachment`` then finds none)."""
        await attachments.delete(owner_id(context), attachment_id)


def _absolute(context: Any, name: str, attachment_id: str) -> str:
    path = reverse(f"agent_sessions_chatkit:{name}", args=[attachment_id])
    request = getattr(context, "request", None)
    if request is None:
        raise ValueError("DjangoChatKitAttachmentStore needs the request in its context")
    return str(request.build_absolute_uri(path))
