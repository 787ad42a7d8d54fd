"""Tests of the front-end protocol adapters (``django_agent_sessions/protocols/``)."""
