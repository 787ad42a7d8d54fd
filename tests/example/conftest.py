"""Fixtures for the example project's tests: live daphne servers and logged-in pages."""

from __future__ import annotations

import pytest
from agents import set_tracing_disabled


@pytest.fixture(autouse=True, scope="session")
def _no_trace_export() -> None:
    # No test has an API key, so the SDK's trace exporter would only log warnings.
    set_tracing_disabled(True)
