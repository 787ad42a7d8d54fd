"""``Draining``, kept importable from here for projects that wrapped their application
before it moved: it lives in ``draining`` and is public as ``django_agent_sessions.Draining``
(a module named ``asgi`` is where Django projects keep their ``application``)."""

from django_agent_sessions.draining import Draining

__all__ = ["Draining"]
