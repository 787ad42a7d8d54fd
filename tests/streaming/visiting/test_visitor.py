"""``Visitor``: who asks, for either transport."""

from __future__ import annotations

import pytest

from django_agent_sessions.streaming.visiting import access
from django_agent_sessions.streaming.visiting.context import AgentRunContext
from django_agent_sessions.streaming.visiting.visitor import Visitor

pytestmark = pytest.mark.django_db


def test_a_signed_in_visitor_opens_ids_as_they_are(make_user):
    alice = make_user("alice")
    visitor = Visitor(alice, "support-1", scope={"type": "http"}, channel_layer=None)
    assert (visitor.session_id, visitor.owner_id) == ("support-1", alice.pk)
    assert visitor.rate_limit_key() == f"user:{alice.pk}"
    context = visitor.get_run_context(session=None)  # type: ignore[arg-type]
    assert isinstance(context, AgentRunContext)
    assert (context.user, context.session_id) == (alice, "support-1")


def test_an_anonymous_visitor_needs_a_saved_session_and_gets_a_namespace():
    from django.contrib.auth.models import AnonymousUser

    with pytest.raises(ValueError, match="saved Django session"):
        Visitor(AnonymousUser(), "x", scope={}, channel_layer=None)
    visitor = Visitor(AnonymousUser(), "x", scope={}, channel_layer=None, session_key="k1")
    namespace = access.anonymous_owner("k1")
    assert visitor.session_id == access.anonymous_session_id(namespace, "x")
    assert "k1" not in visitor.session_id  # a credential never shows
    assert visitor.owner_id is None
    assert visitor.rate_limit_key() == f"anonymous:{namespace}"


def test_an_unusable_id_is_refused(make_user):
    with pytest.raises(ValueError, match="255"):
        Visitor(make_user("alice"), "x" * 256, scope={}, channel_layer=None)


def test_the_project_decides_the_run_context(make_user):
    visitor = Visitor(make_user("alice"), "s", scope={}, channel_layer=None)
    visitor.context_source = lambda session: {"tenant": 7}
    assert visitor.get_run_context(session=None) == {"tenant": 7}  # type: ignore[arg-type]
