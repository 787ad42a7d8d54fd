"""docs/operations.md says what the code does: its settings block is the defaults, and
every span and metric it lists is one the code makes (and the code makes no other)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django_agent_sessions import telemetry
from django_agent_sessions.telemetry import live, runs, settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def section(title: str) -> str:
    text = DOC.read_text()
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def listed(title: str) -> set[str]:
    return set(re.findall(r"^\| `(agent_sessions\.[\w.]+)` \|", section(title), re.M))


def test_the_settings_block_is_the_defaults() -> None:
    blocks = re.findall(r"^```python\n(.*?)^```$", section("Traces"), re.S | re.M)
    namespace: dict[str, Any] = {}
    exec(next(b for b in blocks if "AGENT_SESSIONS" in b), namespace)
    assert namespace["AGENT_SESSIONS"]["TELEMETRY"] == settings.DEFAULTS


def test_the_documented_spans_are_the_spans() -> None:
    made = {
        telemetry.HISTORY_READ,
        telemetry.HISTORY_SAVE,
        telemetry.PUBLISH,
        runs.RUN_SPAN,
        runs.RESUME_SPAN,
        runs.WAIT_SPAN,
    }
    assert listed("Traces") == made


def test_the_documented_metrics_are_the_metrics() -> None:
    source = Path(live.__file__).read_text()
    made = set(re.findall(r'"(agent_sessions\.[\w.]+)"', source))
    assert listed("Metrics") == made
