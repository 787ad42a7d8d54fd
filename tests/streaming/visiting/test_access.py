"""``access``: the namespace of anonymous sockets, a keyed hash of their Django session
key (never the key itself), and the ids it gives their conversations."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.sessions.backends.db import SessionStore

from django_agent_sessions.streaming.visiting import access


def test_the_namespace_is_stable_per_session_and_secret_free(settings: Any) -> None:
    first = access.anonymous_owner("session-key-1")
    assert first == access.anonymous_owner("session-key-1")  # the same tab's id next time
    assert first != access.anonymous_owner("session-key-2")
    assert len(first) == 32
    assert int(first, 16) >= 0
    assert "session-key-1" not in first
    # Keyed: without the project's SECRET_KEY nobody can link a namespace to a session.
    settings.SECRET_KEY = "another-secret"
    assert access.anonymous_owner("session-key-1") != first


@pytest.mark.django_db
def test_a_socket_needs_a_saved_session_for_a_namespace() -> None:
    for scope in ({}, {"session": None}, {"session": SessionStore()}):  # unsaved: no key
        with pytest.raises(ValueError, match="saved Django session"):
            access.anonymous_key(scope)
    session = SessionStore()
    session.create()
    assert session.session_key is not None
    assert access.anonymous_key({"session": session}) == access.anonymous_owner(session.session_key)


def test_an_anonymous_id_is_namespaced_so_it_reaches_only_its_own_conversations() -> None:
    mine = access.anonymous_session_id("ns1", "chat")
    assert mine == "anon:ns1:chat"
    assert mine != access.anonymous_session_id("ns2", "chat")
    # An id that looks namespaced already is namespaced again, not trusted.
    assert access.anonymous_session_id("ns1", "anon:ns2:chat") == "anon:ns1:anon:ns2:chat"


def test_the_close_codes_are_the_documented_ones() -> None:
    # docs/wire-protocol.md: 4401 not signed in (and no anonymous chat), 4403 not yours.
    assert (access.CLOSE_ANONYMOUS, access.CLOSE_FORBIDDEN) == (4401, 4403)
