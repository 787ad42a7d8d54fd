"""The packaged chat: ``path("chat/", include("django_agent_sessions.urls"))``.

Every URL name is namespaced ``django_agent_sessions:``. The page streams its runs over
one of two transports (``AGENT_SESSIONS["TRANSPORT"]``): the websocket, served
separately by ``django_agent_sessions.routing.websocket_urlpatterns`` in the project's
``asgi.py``, or Server-Sent Events with POSTs, served here (``sse.views``).
"""

from __future__ import annotations

from django.urls import path

from django_agent_sessions.chat import (
    branching,
    budget,
    files,
    keeping,
    ratings,
    search,
    shared,
    sharing,
    uploads,
    views,
)
from django_agent_sessions.sse import views as sse

app_name = "django_agent_sessions"

urlpatterns = [
    path("", views.chat, name="chat"),
    path("new/", views.new_conversation, name="new"),
    path("conversations/", views.conversation_list, name="list"),
    path("budget/", budget.budget, name="budget"),
    path("search/", search.search, name="search"),
    path("c/<str:session_id>/", views.conversation, name="conversation"),
    path("c/<str:session_id>/rename/", views.rename_conversation, name="rename"),
    path("c/<str:session_id>/delete/", views.delete_conversation, name="delete"),
    path("c/<str:session_id>/clear/", views.clear_conversation, name="clear"),
    path("c/<str:session_id>/rewind/", views.rewind_conversation, name="rewind"),
    path("c/<str:session_id>/branch/", branching.branch, name="branch"),
    path("c/<str:session_id>/keep/", keeping.keep, name="keep"),
    path("c/<str:session_id>/events/", sse.events, name="events"),
    path("c/<str:session_id>/messages/", sse.messages, name="messages"),
    path("c/<str:session_id>/cancel/", sse.cancel, name="cancel"),
    path("c/<str:session_id>/approvals/<str:call_id>/", sse.approval, name="approval"),
    path("c/<str:session_id>/queue/<int:queued_id>/", sse.queue_edit, name="queue_edit"),
    path("c/<str:session_id>/queue/<int:queued_id>/remove/", sse.queue_remove, name="queue_remove"),
    path("c/<str:session_id>/older/", sse.older, name="older"),
    path("c/<str:session_id>/files/", uploads.upload, name="upload"),
    path("c/<str:session_id>/files/<int:attachment_id>/", files.attachment, name="attachment"),
    path("c/<str:session_id>/items/<int:item_id>/feedback/", ratings.rate_reply, name="feedback"),
    path("c/<str:session_id>/feedback/", ratings.ratings_of, name="feedback_list"),
    # Share links (SHARE_LINKS): the owner's, then the page a link opens.
    path("c/<str:session_id>/share/", sharing.create_link, name="share"),
    path("share/links/", sharing.links, name="share_links"),
    path("share/<str:token>/", shared.shared, name="shared"),
    path("share/<str:token>/revoke/", sharing.revoke, name="share_revoke"),
    path("share/<str:token>/copy/", shared.continue_as_copy, name="share_copy"),
    path("share/<str:token>/files/<int:attachment_id>/", shared.shared_file, name="shared_file"),
]
