"""The counts a run's usage keeps, written once: the columns of ``AgentRun`` and of
``RunModelUsage`` with these names, in the order the admin shows them."""

from __future__ import annotations

COUNTS = (
    "requests",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "reasoning_tokens",
    "total_tokens",
)
