"""The suite's Python processes (servers, workers, ``manage.py``), started warm.

Each process of the example project or of the suite's ASGI application costs about five
seconds of CPU to start, most of it importing the Agents SDK, and the suite starts some
hundreds of them: on a 2-core machine that was a third of ``bin/test``. So each test
process keeps a warm interpreter (the standard library's multiprocessing forkserver,
``tests/warm_preload.py`` imported once), and ``start`` forks the process from it: what
runs is the same command line (``-m daphne ...``, ``manage.py migrate``, ``-c SCRIPT``)
in a process of its own, with its own environment, working directory, output, signals
and exit status, as gunicorn's ``--preload`` forks its workers. Nothing the process does
is imported before the fork but modules: settings, connections and loops are its own.

``TEST_WARM_START=0`` starts each with ``subprocess.Popen`` instead (the operator's way,
which ``bin/run``'s test and the guides' fresh projects take anyway).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import runpy
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple, Protocol

# In ``args``, replaced in the started process by the number of its copy of ``listener``.
LISTENER_FD = "{listener-fd}"


class Process(Protocol):
    """What the tests use of a started process (``subprocess.Popen``'s names)."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def send_signal(self, sig: int) -> None: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...


def enabled() -> bool:
    return os.environ.get("TEST_WARM_START", "1") != "0"


def start(
    args: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path,
    output: Path | None = None,
    errors: Path | None = None,
    listener: socket.socket | None = None,
    talk: socket.socket | None = None,
) -> Process:
    """``python ARGS`` in ``cwd`` with ``env``, its output appended to ``output`` (or to
    this process's) and its errors to ``errors`` (or to ``output``), handed ``listener``
    where ``args`` say ``LISTENER_FD``; ``talk`` (one end of a ``socketpair``), instead
    of ``output``, is its stdin and stdout."""
    launch = Launch(list(args), env, cwd, output, errors or output, listener, talk)
    if not enabled():
        return _popen(launch)
    process = _context().Process(
        target=_run_as_main,
        args=(launch,),
        daemon=True,  # ended with the test process that started it, whatever happens
    )
    process.start()
    return WarmProcess(process, launch.args)


class Launch(NamedTuple):
    """What ``start`` was given, for either way of starting (picklable: the forkserver
    gets it, the sockets as descriptors of its own)."""

    args: list[str]
    env: dict[str, str]
    cwd: Path
    output: Path | None
    errors: Path | None
    listener: socket.socket | None
    talk: socket.socket | None

    def command(self) -> list[str]:
        """``args``, the listener's descriptor number where they say ``LISTENER_FD``."""
        if self.listener is None:
            return self.args
        number = str(self.listener.fileno())
        return [number if arg == LISTENER_FD else arg for arg in self.args]


def run(args: Sequence[str], *, env: dict[str, str], cwd: Path, timeout: float) -> tuple[int, str]:
    """``python ARGS`` to its end: its exit status and its output (stdout and stderr)."""
    with tempfile.TemporaryDirectory(prefix="warm-run-") as directory:
        output = Path(directory) / "output"
        process = start(args, env=env, cwd=cwd, output=output)
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        return code, output.read_text(errors="replace") if output.exists() else ""


class WarmProcess:
    """A forked process, seen through ``subprocess.Popen``'s names."""

    def __init__(self, process: multiprocessing.process.BaseProcess, args: list[str]) -> None:
        self._process = process
        self.args = args

    @property
    def pid(self) -> int:
        assert self._process.pid is not None
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        self._process.is_alive()  # reads the exit status when there is one
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self._process.exitcode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()


_warm: Any = None


def _context() -> Any:
    global _warm
    if _warm is None:
        _warm = multiprocessing.get_context("forkserver")
        _warm.set_forkserver_preload(["tests.warm_preload"])
    return _warm


def _run_as_main(launch: Launch) -> None:
    """In the forked process: become ``python ARGS`` as the interpreter would start it."""
    os.chdir(launch.cwd)
    os.environ.clear()
    os.environ.update(launch.env)
    _write_to(launch.output, launch.errors)
    if launch.talk is not None:
        os.dup2(launch.talk.fileno(), 0)
        os.dup2(launch.talk.fileno(), 1)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    extra = [entry for entry in launch.env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.path[:0] = [str(launch.cwd), *extra]
    try:
        _as_main(launch.command())
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def _as_main(args: list[str]) -> None:
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":
        sys.argv = ["-c", *args[2:]]
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = list(args)
        runpy.run_path(args[0], run_name="__main__")


def _write_to(output: Path | None, errors: Path | None) -> None:
    for path, number in ((output, 1), (errors, 2)):
        if path is not None:
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.dup2(descriptor, number)
            os.close(descriptor)
    # Line-buffered, as PYTHONUNBUFFERED makes a server's log: read while it runs.
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")  # noqa: SIM115


def _popen(launch: Launch) -> subprocess.Popen[bytes]:
    fds = () if launch.listener is None else (launch.listener.fileno(),)
    talking = None if launch.talk is None else launch.talk.fileno()
    with contextlib.ExitStack() as opened:
        out: Any = talking
        if talking is None and launch.output is not None:
            out = opened.enter_context(launch.output.open("ab"))
        err: IO[bytes] | None = None
        if launch.errors is not None:
            err = opened.enter_context(launch.errors.open("ab"))
        return subprocess.Popen(
            [sys.executable, *launch.command()],
            env=launch.env,
            cwd=launch.cwd,
            pass_fds=fds,
            stdin=talking,
            stdout=out,
            stderr=err,
        )
