"""The benchmarks still run: ``bin/bench --smoke`` in miniature.

Speed is not checked here (a shared CI machine says nothing about it); that every
benchmark runs to the end, writes its JSON and finds every backend correct is. The
bound below only catches a hang: a smoke run takes about 30 s on an idle 2-core machine,
and the bound leaves room for a machine busy with something else.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HANG_SECONDS = 400

# pytest-timeout's bound is above the hang bound: a slow smoke run on a busy machine ends
# with the benchmark's own output (``_finish``), not with a stack dump at the suite's
# default of two minutes.
pytestmark = [
    pytest.mark.once,
    pytest.mark.full,
    pytest.mark.long(80),
    pytest.mark.timeout(HANG_SECONDS + 60),
]


Start = Callable[..., "subprocess.Popen[str]"]


@pytest.fixture
def start() -> Iterator[Start]:
    """Starts a benchmark; at the end of the test, nothing it started is left running."""
    started: list[subprocess.Popen[str]] = []

    def start_one(module: str, out_dir: Path, *args: str) -> subprocess.Popen[str]:
        started.append(_start(module, out_dir, *args))
        return started[-1]

    yield start_one
    for process in started:
        _kill_group(process)


def _kill_group(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _start(module: str, out_dir: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DJANGO_SETTINGS_MODULE", None)  # the benchmarks configure their own processes
    return subprocess.Popen(
        [sys.executable, "-m", module, "--smoke", "--out-dir", str(out_dir), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Its own process group: a hung benchmark is killed with the servers it started,
        # which would otherwise hold its output pipe open (and this test) after it died.
        start_new_session=True,
    )


def _finish(process: subprocess.Popen[str]) -> str:
    try:
        output, _ = process.communicate(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        output, _ = process.communicate()
        raise AssertionError(f"smoke run exceeded {HANG_SECONDS}s:\n{output[-3000:]}") from None
    assert process.returncode == 0, output[-3000:]
    return output


@pytest.mark.timeout(2 * HANG_SECONDS)
def test_sessions_and_streaming_benchmarks_run(start: Start, tmp_path: Path) -> None:
    db = os.environ.get("AGENT_SESSIONS_TEST_DB", "sqlite")
    # Both at once: the machine has two cores and each benchmark mostly waits.
    sessions = start(
        "benchmarks.sessions",
        tmp_path / "sessions",
        "--db",
        db,
        "--backends",
        "django,floor",
    )
    streaming = start("benchmarks.streaming", tmp_path / "streaming", "--db", db)
    sessions_output, streaming_output = _finish(sessions), _finish(streaming)

    result = json.loads((tmp_path / "sessions" / "sessions-latest.json").read_text())
    ran = {doc["backend"]: doc for doc in result["results"] if "workloads" in doc}
    assert {"django", "floor"} <= set(ran), sessions_output[-3000:]
    for name, doc in ran.items():
        assert doc["correctness"]["pops"]["ok"], (name, doc["correctness"])
        assert doc["correctness"]["batches"]["ok"], (name, doc["correctness"])
        assert doc["workloads"]["flat_get_20_at_1m"]["ops"] >= 3
    assert "### targets" in (tmp_path / "sessions" / "sessions-latest.md").read_text()

    streamed = json.loads((tmp_path / "streaming" / "streaming-latest.json").read_text())
    modes = {r["mode"] for r in streamed["results"]}
    transports = {"sessions, SSE", "websocket, paired"}  # each one's cost per message
    paired = {*transports, "floor view", "AI SDK adapter", "AG-UI adapter"}  # paired rounds
    assert {"sessions", "baseline", *paired} <= modes, streaming_output[-3000:]
    costs = {r["mode"]: r["cpu_ms"] for r in streamed["results"] if "cpu_ms" in r}
    assert set(costs) == transports, costs
    judged = [c for c in streamed["targets"] if "of the floor view" in c["target"]]
    assert [c["target"].split(" (")[0] for c in judged] == [
        "SSE within 1.2x of the floor view",
        "the AI SDK adapter within 1.2x of the floor view",
        "the AG-UI adapter within 1.2x of the floor view",
        "the websocket within 1.2x of the floor view",
    ], streamed["targets"]
    assert all(cpu > 0 for cpu in costs.values()), costs
    for r in streamed["results"]:
        if "completed" in r:
            # Every client is accounted for; how many hung is a measurement, shown in
            # the report (a loaded CI machine must not turn it into a flaky test).
            assert r["completed"] + r["hung"] + r["error_count"] == r["clients"], r
            assert r["completed"] > 0, r
        if "open" in r:
            assert r["open"] == r["clients"], r


def test_parity_benchmark_runs(start: Start, tmp_path: Path) -> None:
    db = os.environ.get("AGENT_SESSIONS_TEST_DB", "sqlite")
    output = _finish(start("benchmarks.parity", tmp_path, "--db", db))
    result = json.loads((tmp_path / f"parity-{db}-latest.json").read_text())
    expected = (
        {"django", "sdk-pool", "sdk-warm"} if db == "sqlite" else {"django", "django-shipped"}
    )
    assert set(result["contenders"]) == expected, output[-3000:]
    for entry in result["workloads"].values():
        for name in expected - {"django"}:
            low, high = entry[name]["ci95"]
            assert low <= entry[name]["ratio"] <= high, entry
    if db == "sqlite":
        assert {c["journal_mode"] for c in result["contenders"].values()} == {"wal"}


@pytest.mark.parametrize("columns", ["kept", "empty"])
def test_parity_floor_runs(start: Start, tmp_path: Path, columns: str) -> None:
    if os.environ.get("AGENT_SESSIONS_TEST_DB", "sqlite") != "sqlite":
        pytest.skip("the guarantee floor measures SQLite only")
    args = ("--db", "sqlite", "--floor", "--floor-columns", columns)
    output = _finish(start("benchmarks.parity", tmp_path, *args))
    kind = "parity-sqlite-floor" + ("" if columns == "kept" else "-no-columns")
    result = json.loads((tmp_path / f"{kind}-latest.json").read_text())
    assert list(result["contenders"]) == ["floor", "sdk-pool", "sdk-warm", "django"], output
    assert result["reference"] == "floor"
    for entry in result["workloads"].values():
        for name in ("sdk-pool", "sdk-warm", "django"):
            low, high = entry[name]["ci95"]
            assert low <= entry[name]["ratio"] <= high, entry
    assert {c["journal_mode"] for c in result["contenders"].values()} == {"wal"}


def test_attachments_benchmark_runs(start: Start, tmp_path: Path) -> None:
    db = os.environ.get("AGENT_SESSIONS_TEST_DB", "sqlite")
    output = _finish(start("benchmarks.attachments", tmp_path, "--db", db))
    result = json.loads((tmp_path / f"attachments-{db}-latest.json").read_text())
    assert (result["images"], result["items"]) == (10, 200), output[-3000:]
    assert min(result["images_median_ms"], result["plain_median_ms"]) > 0, result
    assert "target <= 1.2" in output


def test_tracing_benchmark_runs(start: Start, tmp_path: Path) -> None:
    db = os.environ.get("AGENT_SESSIONS_TEST_DB", "sqlite")
    output = _finish(start("benchmarks.tracing", tmp_path, "--db", db))
    result = json.loads((tmp_path / f"tracing-{db}-latest.json").read_text())
    assert {r["mode"] for r in result["results"]} == {"tracing off", "tracing on"}, output[-3000:]
    [traced] = [r for r in result["results"] if r["mode"] == "tracing on" and "round" in r]
    [stored] = [r for r in result["results"] if "traced_runs" in r]
    # The runs made with telemetry on (the warm-up's and the round's) stored a trace id,
    # and those made with it off did not: the switch between rounds took effect.
    assert stored["traced_runs"] == stored["expected"] == 1 + traced["completed"], stored
    [verdict] = result["targets"]
    assert verdict["ratio"] > 0, verdict  # speed is a result, not this test's check
    assert "Tracing overhead" in output


def test_search_benchmark_runs(start: Start, tmp_path: Path) -> None:
    db = os.environ.get("AGENT_SESSIONS_TEST_DB", "sqlite")
    output = _finish(start("benchmarks.search", tmp_path, "--db", db))
    result = json.loads((tmp_path / f"search-{db}-latest.json").read_text())
    latency, writes = result["latency"], result["writes"]
    assert latency["scale"]["conversations"] == 100, output[-3000:]
    assert (latency["all"]["n"], latency["all"]["p95_ms"] > 0) == (48, True), latency
    assert latency["kinds"]["common word"]["hits"] > 0, latency  # the index finds them
    assert latency["kinds"]["absent word"]["hits"] == 0, latency
    assert set(writes["modes"]) == {"no index", "index"}, writes
    assert writes["modes"]["index"]["ratio"] > 0, writes  # speed is a result, not a check
    assert "target < 200 ms" in output, output[-3000:]
    assert "target <= 1.15" in output, output[-3000:]


@pytest.mark.redis
def test_tasks_benchmark_runs(start: Start, tmp_path: Path) -> None:
    # PostgreSQL and Redis: bin/test starts both for every pass (in CI, missing is failing).
    if not (os.environ.get("PGHOST") and os.environ.get("REDIS_URL")):
        if os.environ.get("CI"):
            pytest.fail("PGHOST and REDIS_URL must be set: bin/test starts both")
        pytest.skip("the runs-as-tasks benchmark needs PostgreSQL and Redis")
    output = _finish(start("benchmarks.tasks", tmp_path, "--db", "postgres"))
    result = json.loads((tmp_path / "tasks-latest.json").read_text())
    modes = {row["mode"]: row for row in result["summary"]}
    assert set(modes) == {"inline", "tasks, database", "tasks, Celery"}, output[-3000:]
    for row in modes.values():
        # Every run is accounted for; speed is a result, not this test's check.
        assert row["completed"] + row["hung"] + row["errors"] == row["clients"], row
        assert row["completed"] > 0, row
    for mode in ("tasks, database", "tasks, Celery"):
        assert modes[mode]["task_worker_cpu_s"] > 0, modes[mode]
        assert modes[mode]["queue_wait_p50_ms"] is not None, modes[mode]
    assert "TTFT p95 overhead against inline" in output


def test_titles_benchmark_runs(start: Start, tmp_path: Path) -> None:
    db = os.environ.get("AGENT_SESSIONS_TEST_DB", "sqlite")
    output = _finish(start("benchmarks.titles", tmp_path, "--db", db))
    result = json.loads((tmp_path / f"titles-{db}-latest.json").read_text())
    rounds = {r["mode"]: r for r in result["results"]}
    assert set(rounds) == {"titles off", "titles on"}, output[-3000:]
    for mode, titled in (("titles off", 0), ("titles on", 5)):
        # Every chat sent both messages; only "on" wrote the model's titles.
        assert rounds[mode]["second"]["completed"] == rounds[mode]["clients"] == 5, rounds[mode]
        assert (rounds[mode]["conversations"], rounds[mode]["titled"]) == (5, titled), rounds
        assert rounds[mode]["valid"], rounds[mode]
    [verdict] = result["targets"]
    assert verdict["invalid_rounds"] == [], verdict
    # Speed is a result, not this test's check; that the ratios are there is.
    assert min(verdict["ratio_p50"], verdict["ratio_p99"]) > 0, verdict
    assert "titles within 1.02x" in output, output[-3000:]
