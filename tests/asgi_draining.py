"""The test suite's ASGI application wrapped as the deployment guide says, so that a
worker drains on SIGTERM (``django_agent_sessions.Draining``)."""

from __future__ import annotations

from django_agent_sessions import Draining
from tests.asgi import application as served

application = Draining(served)
