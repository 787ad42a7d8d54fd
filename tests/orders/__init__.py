"""Tests of ``django_agent_sessions.orders``: the run orders of runs executed by tasks."""
