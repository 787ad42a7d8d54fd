"""``management.options``: the options the export, import and prune commands share,
read as an operator writes them."""

from __future__ import annotations

from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from io import StringIO
from pathlib import Path

import pytest
from django.core.management.base import CommandError, OutputWrapper
from django.utils import timezone

from django_agent_sessions.management.options import parse_since, writing_to


def test_since_takes_an_age_a_date_or_a_time() -> None:
    before = timezone.now()
    since = parse_since("30d")
    assert before - timedelta(days=30) <= since <= timezone.now() - timedelta(days=30)
    day = parse_since("2026-01-31")
    assert (day.year, day.month, day.day, day.hour) == (2026, 1, 31, 0)
    assert timezone.is_aware(day)
    moment = parse_since("2026-01-31T12:30:00+00:00")
    assert moment == datetime(2026, 1, 31, 12, 30, tzinfo=dt_timezone.utc)


def test_a_since_it_cannot_read_names_what_it_takes() -> None:
    with pytest.raises(CommandError, match=r"--since 'yesterday'.*30d"):
        parse_since("yesterday")


def test_output_goes_to_the_file_or_to_standard_output(tmp_path: Path) -> None:
    target = tmp_path / "export.jsonl"
    stdout = StringIO()
    with writing_to(OutputWrapper(stdout), str(target)) as write:
        write("é\n")
    assert target.read_text(encoding="utf-8") == "é\n"
    assert stdout.getvalue() == ""
    with writing_to(OutputWrapper(stdout), None) as write:
        write("a")
        write("b")
    assert stdout.getvalue() == "ab"  # as it is: no line end added
