"""Who may open which conversation over a socket.

Signed-in users open conversations by their id, and own what they create. Anonymous
sockets (with ``ALLOW_ANONYMOUS``) get ids namespaced by their Django session, so they
can only ever reach their own conversations; the namespace is a keyed hash of the
session key, never the key itself.
"""

from __future__ import annotations

from typing import Any

from django.utils.crypto import salted_hmac

CLOSE_ANONYMOUS = 4401
CLOSE_FORBIDDEN = 4403
ANONYMOUS_PREFIX = "anon"


def anonymous_owner(session_key: str) -> str:
    """A stable, secret-free name for a Django session.

    The session key is a credential: stored in a conversation id it would show in the
    admin and in exports, so the id holds a keyed hash of it instead.
    """
    return salted_hmac(
        "django_agent_sessions.anonymous", session_key, algorithm="sha256"
    ).hexdigest()[:32]


def anonymous_key(scope: dict[str, Any]) -> str:
    """The namespace of an anonymous socket; ValueError without a saved Django session."""
    key = getattr(scope.get("session"), "session_key", None)
    if not key:
        raise ValueError("anonymous sockets need a saved Django session")
    return anonymous_owner(key)


def anonymous_session_id(namespace: str, requested: str) -> str:
    return f"{ANONYMOUS_PREFIX}:{namespace}:{requested}"
