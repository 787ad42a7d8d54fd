"""OpenAI's ChatKit on the app's rows (docs/protocols/chatkit.md; the ``chatkit`` extra).

- ``store``: ``DjangoChatKitStore``, ChatKit's ``Store`` on the conversations' rows;
- ``attachments``: ``DjangoChatKitAttachmentStore``, files in Django's storage;
- ``mirror``: the SDK form of a ChatKit message, the one ``DjangoSession`` reads;
- ``context``: what a request hands the store (its user);
- ``server``: ``AgentChatKitServer``, the agent through ChatKit's own agents helpers;
- ``views``, ``urls``: the POST ChatKit's client sends, and the attachments' upload.
"""

from __future__ import annotations

from django_agent_sessions.protocols.chatkit.attachments import DjangoChatKitAttachmentStore
from django_agent_sessions.protocols.chatkit.context import ChatKitContext
from django_agent_sessions.protocols.chatkit.store import DjangoChatKitStore

__all__ = ["ChatKitContext", "DjangoChatKitAttachmentStore", "DjangoChatKitStore"]
