"""The packaged chat's URLs (``urls.py``), included under ``chat/`` by the test project:
every name reverses in the ``django_agent_sessions`` namespace and resolves to its view."""

from __future__ import annotations

import pytest
from django.urls import resolve, reverse

from django_agent_sessions import urls
from django_agent_sessions.chat import views
from django_agent_sessions.sse import views as sse

NAMES = {
    "chat": ((), "/chat/"),
    "new": ((), "/chat/new/"),
    "list": ((), "/chat/conversations/"),
    "budget": ((), "/chat/budget/"),
    "search": ((), "/chat/search/"),
    "conversation": (("c-1",), "/chat/c/c-1/"),
    "rename": (("c-1",), "/chat/c/c-1/rename/"),
    "keep": (("c-1",), "/chat/c/c-1/keep/"),
    "delete": (("c-1",), "/chat/c/c-1/delete/"),
    "clear": (("c-1",), "/chat/c/c-1/clear/"),
    "rewind": (("c-1",), "/chat/c/c-1/rewind/"),
    "branch": (("c-1",), "/chat/c/c-1/branch/"),
    "events": (("c-1",), "/chat/c/c-1/events/"),
    "messages": (("c-1",), "/chat/c/c-1/messages/"),
    "cancel": (("c-1",), "/chat/c/c-1/cancel/"),
    "approval": (("c-1", "call-7"), "/chat/c/c-1/approvals/call-7/"),
    "queue_edit": (("c-1", 4), "/chat/c/c-1/queue/4/"),
    "queue_remove": (("c-1", 4), "/chat/c/c-1/queue/4/remove/"),
    "older": (("c-1",), "/chat/c/c-1/older/"),
    "upload": (("c-1",), "/chat/c/c-1/files/"),
    "attachment": (("c-1", 3), "/chat/c/c-1/files/3/"),
    "feedback": (("c-1", 9), "/chat/c/c-1/items/9/feedback/"),
    "feedback_list": (("c-1",), "/chat/c/c-1/feedback/"),
    "share": (("c-1",), "/chat/c/c-1/share/"),
    "share_links": ((), "/chat/share/links/"),
    "shared": (("tok",), "/chat/share/tok/"),
    "share_revoke": (("tok",), "/chat/share/tok/revoke/"),
    "share_copy": (("tok",), "/chat/share/tok/copy/"),
    "shared_file": (("tok", 3), "/chat/share/tok/files/3/"),
}


def test_every_url_has_a_name_here():
    assert urls.app_name == "django_agent_sessions"
    assert {pattern.name for pattern in urls.urlpatterns} == set(NAMES)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_name_reverses_and_resolves_back(name):
    args, url = NAMES[name]
    assert reverse(f"django_agent_sessions:{name}", args=args) == url
    match = resolve(url)
    assert match.view_name == f"django_agent_sessions:{name}"
    assert [str(value) for value in match.args or match.kwargs.values()] == [str(a) for a in args]


def test_the_chat_and_the_streams_are_the_views_of_their_transports():
    assert resolve("/chat/").func is views.chat
    assert resolve("/chat/c/c-1/events/").func is sse.events
    assert resolve("/chat/c/c-1/messages/").func is sse.messages
