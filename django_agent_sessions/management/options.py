"""The options several management commands share, each spelled and parsed in one place.

An operator who learns ``--since``, ``--output`` or ``--database`` on one command can use
it on the others with the same meaning, so they are declared and read here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import datetime, time
from pathlib import Path

from django.core.management.base import CommandError, CommandParser, OutputWrapper
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from django_agent_sessions import transfer
from django_agent_sessions.conf import values


def add_since(parser: CommandParser, help: str) -> None:
    """``--since WHEN`` (read with ``parse_since``); ``help`` says what it keeps."""
    parser.add_argument("--since", metavar="WHEN", help=help)


def parse_since(value: str) -> datetime:
    """``--since``: a date, an ISO 8601 time, or an age (``30d``) back from now."""
    try:
        return timezone.now() - values.parse_duration(value)
    except ValueError:
        pass
    moment = parse_datetime(value)
    if moment is None and (day := parse_date(value)) is not None:
        moment = datetime.combine(day, time.min)
    if moment is None:
        raise CommandError(
            f"--since {value!r}: use a date (2026-01-31), a date and time in ISO 8601, "
            "or an age such as 30d."
        )
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, timezone.get_default_timezone())
    return moment


def add_output(parser: CommandParser) -> None:
    """``--output``/``-o``: the file an export writes (see ``writing_to``)."""
    parser.add_argument("--output", "-o", help="File to write (default: standard output).")


@contextlib.contextmanager
def writing_to(stdout: OutputWrapper, output: str | None) -> Iterator[Callable[[str], object]]:
    """A function that writes text as it is to the ``--output`` file (UTF-8), or to the
    command's standard output when there is none, without adding line ends."""
    if output is None:
        yield lambda text: stdout.write(text, ending="")
        return
    with Path(output).open("w", encoding="utf-8") as file:
        yield file.write


def add_database(parser: CommandParser, to: str) -> None:
    """``--database``: the alias the command uses ``to`` ("read", "write"...); left out,
    it is None and the command asks the database router."""
    parser.add_argument("--database", default=None, help=f"Database alias to {to}.")


def add_format(parser: CommandParser, help: str) -> None:
    """``--format json|jsonl`` of an export file; ``help`` says how it is chosen when the
    option is left out."""
    parser.add_argument("--format", choices=transfer.FORMATS, help=help)
