"""``manage.py agent_sessions_schedule``: ``--once`` fires what is due and says so;
``--interval`` takes a positive number; two scheduler processes on one database, waking
often, fire each firing of a schedule exactly once, and stop on SIGTERM."""

from __future__ import annotations

import io
import re
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from django_agent_sessions.models import AgentRun, ScheduledRun
from tests.processes import REPO_ROOT, worker_env
from tests.schedule_helpers import AGENT, ENDED, a_schedule, runs_ended

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.long(15)]

FIRINGS = 5
SCHEDULERS = 2
SECOND = timedelta(seconds=1)
FIRED = re.compile(r"^Fired 'every second' \((?P<at>[^)]+)\): run (?P<run>[0-9a-f-]+)$", re.M)


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.AGENT_SESSIONS = {"RATE_LIMIT": None}


def test_once_fires_what_is_due_and_exits():
    schedule = a_schedule()
    out, err = io.StringIO(), io.StringIO()
    call_command("agent_sessions_schedule", "--once", stdout=out, stderr=err)
    run = AgentRun.objects.get()
    assert out.getvalue() == (
        f"Fired 'report' ({schedule.next_fire_at.isoformat()}): run {run.run_id}\n"
    )
    assert err.getvalue() == ""
    runs_ended([str(run.run_id)])
    call_command("agent_sessions_schedule", "--once", stdout=out)
    assert AgentRun.objects.count() == 1


def test_a_firing_without_a_run_is_reported_on_stderr():
    a_schedule(agent="tests.nowhere.agent")
    out, err = io.StringIO(), io.StringIO()
    call_command("agent_sessions_schedule", "--once", stdout=out, stderr=err)
    assert out.getvalue() == ""
    assert "no run: ImproperlyConfigured" in err.getvalue() or "no run:" in err.getvalue()


@pytest.mark.parametrize("interval", ["0", "-1"])
def test_interval_takes_a_positive_number_of_seconds(interval):
    with pytest.raises(CommandError, match="--interval takes a positive number of seconds"):
        call_command("agent_sessions_schedule", "--interval", interval)


# Scheduler processes: bin/test --full only (docs/tasks.md, "Tests").
@pytest.mark.full
def test_two_schedulers_fire_each_firing_once():
    first = timezone.now() + 2 * SECOND  # both processes are up by then, or soon after
    a_schedule("every second", every=SECOND, next_fire_at=first)
    schedulers = [_scheduler() for _ in range(SCHEDULERS)]
    try:
        _until(lambda: AgentRun.objects.count() >= FIRINGS, within=60, processes=schedulers)
        ScheduledRun.objects.update(enabled=False)
        _until(lambda: not AgentRun.objects.exclude(status__in=ENDED).exists(), within=30)
    finally:
        outputs = [_stopped(process) for process in schedulers]
    fired = [match for out in outputs for match in FIRED.finditer(out)]
    times = [datetime.fromisoformat(match["at"]) for match in fired]
    runs = sorted(str(run_id) for run_id in AgentRun.objects.values_list("run_id", flat=True))
    assert len(runs) >= FIRINGS
    assert sorted(match["run"] for match in fired) == runs  # every run is a reported firing
    assert len(set(times)) == len(times), "a firing fired twice"
    # Each is a time of the series: a whole number of seconds after the first.
    assert all((at - first) % SECOND == timedelta(0) for at in times)
    assert all(run.status == "completed" for run in AgentRun.objects.all())


def _scheduler() -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "django", "agent_sessions_schedule", "--interval", "0.5"],
        env=worker_env(AGENT_SESSIONS_TEST_AGENT=AGENT, PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )


def _until(done, *, within: float, processes: list[subprocess.Popen[str]] = ()) -> None:  # type: ignore[assignment]
    deadline = time.monotonic() + within
    while not done():
        for process in processes:
            assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _stopped(process: subprocess.Popen[str]) -> str:
    """The process's standard output, once SIGTERM ended it (the loop's pass finishes)."""
    process.send_signal(signal.SIGTERM)
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    assert process.returncode == 0, err
    return out
