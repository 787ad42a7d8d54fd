"""``django_agent_sessions.asgi``: the old path of ``Draining`` still imports it."""

from __future__ import annotations

from django_agent_sessions import Draining, asgi


def test_draining_is_still_importable_from_its_old_module():
    assert asgi.Draining is Draining
    assert asgi.__all__ == ["Draining"]
