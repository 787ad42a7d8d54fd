"""Packaging promises: importable before setup, migrations complete."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import call_command


def test_import_before_django_setup_does_not_touch_models():
    code = (
        "import django_agent_sessions, sys;"
        "assert 'django_agent_sessions.models' not in sys.modules;"
        "print(django_agent_sessions.__version__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_lazy_attribute_and_unknown_name():
    import django_agent_sessions

    assert django_agent_sessions.DjangoSession.__name__ == "DjangoSession"
    with pytest.raises(AttributeError):
        _ = django_agent_sessions.Nope  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_migrations_are_complete():
    out = StringIO()
    call_command("makemigrations", "django_agent_sessions", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
