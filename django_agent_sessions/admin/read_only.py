"""What the admin's pages of records share: nobody adds or edits those rows, and a row
links to its conversation's page.

Runs, tool decisions and ratings are written by the app as things happen (a worker, the
owner in the chat, a person rating a reply); an edit in the admin would make the record
say something that did not happen, so these pages only read.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

CONVERSATION_PAGE = "admin:django_agent_sessions_agentsession_change"


class NoAddingOrEditing:
    """Mixed in before ``ModelAdmin``: rows are viewed (and may be deleted), never made
    or changed here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnly(NoAddingOrEditing):
    """Mixed in before ``ModelAdmin``: rows are only viewed; deleting them is left to the
    conversation they belong to (or to retention)."""

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def conversation_url(session_pk: int) -> str:
    """The admin page of the conversation with this primary key."""
    return reverse(CONVERSATION_PAGE, args=[session_pk])


def conversation_link(session_pk: int, label: object) -> SafeString:
    """A link to the conversation's admin page, its text ``label`` (escaped)."""
    return format_html('<a href="{}">{}</a>', conversation_url(session_pk), label)
