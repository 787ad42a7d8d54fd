"""Benchmarks for django-agent-sessions (run with ``bin/bench``; not part of the test run)."""
