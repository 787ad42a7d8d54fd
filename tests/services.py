"""PostgreSQL and Redis servers of a test's own, which the test may restart or kill.

The suite's shared servers (``bin/services.sh``) must keep running for every other test;
a test that restarts a database for real starts private ones here instead: a new
PostgreSQL cluster (``initdb``, a few seconds) or a ``redis-server`` in a temporary
directory, on a free loopback port that stays the same across restarts. Both binaries
come from the Debian packages that ``bin/services.sh`` installs.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def _pg_bindir() -> Path:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    raise RuntimeError("PostgreSQL is not installed (bin/services.sh installs it)")


class PostgresServer:
    """A throwaway PostgreSQL cluster: ``start()``, ``restart()``, ``stop()``."""

    def __init__(self) -> None:
        # Not under pytest's tmp_path: the postgres user (initdb refuses root) must be
        # able to reach it, and pytest's base directory is private to root.
        self.directory = Path(tempfile.mkdtemp(prefix="agent-sessions-pg-"))
        self.data = self.directory / "data"
        self.port = free_port()
        self.bindir = _pg_bindir()
        self.user = "postgres"

    def _as_owner(self, *command: str | Path) -> list[str]:
        # initdb refuses to run as root; the cluster then belongs to the postgres user.
        args = [str(part) for part in command]
        return ["runuser", "-u", "postgres", "--", *args] if os.getuid() == 0 else args

    def start(self) -> None:
        if not self.data.exists():
            if os.getuid() == 0:
                shutil.chown(self.directory, user="postgres")
            subprocess.run(
                self._as_owner(
                    self.bindir / "initdb",
                    "-D",
                    self.data,
                    "-U",
                    self.user,
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                ),
                check=True,
                capture_output=True,
                timeout=120,
            )
        self._pg_ctl("start", "-w", "-o", self._options(), "-l", str(self.directory / "log"))
        _wait_for_port(self.port, 30)

    def start_from(self, data: Path) -> None:
        """Start on a copy of another (stopped) cluster's data directory: its databases,
        without initdb."""
        subprocess.run(["cp", "-a", str(data), str(self.data)], check=True, timeout=120)
        if os.getuid() == 0:
            shutil.chown(self.directory, user="postgres")
        self.start()

    def shut_down(self) -> None:
        """``pg_ctl stop -m fast``, keeping the data directory (see ``start_from``)."""
        self._pg_ctl("stop", "-m", "fast")

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every open connection breaks."""
        self._pg_ctl(
            "restart", "-w", "-m", "fast", "-o", self._options(), "-l", str(self.directory / "log")
        )
        _wait_for_port(self.port, 30)

    def stop(self) -> None:
        if self.data.exists():
            self._pg_ctl("stop", "-m", "immediate", check=False)
        shutil.rmtree(self.directory, ignore_errors=True)

    def _options(self) -> str:
        return (
            f"-h 127.0.0.1 -p {self.port} -k {self.directory} -c fsync=off "
            "-c synchronous_commit=off -c max_connections=100"
        )

    def _pg_ctl(self, *args: str, check: bool = True) -> None:
        # Output to a file, never to a pipe: the server inherits pg_ctl's descriptors,
        # and reading a pipe until EOF would wait for the server to exit.
        with (self.directory / "pg_ctl.log").open("ab") as log:
            subprocess.run(
                self._as_owner(self.bindir / "pg_ctl", "-D", self.data, *args),
                check=check,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=120,
            )

    def create_database(self, name: str) -> str:
        """Create ``name``; its ``DATABASE_URL``."""
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=self.user, dbname="postgres", autocommit=True
        ) as connection:
            connection.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.url(name)

    def url(self, name: str) -> str:
        return f"postgres://{self.user}@127.0.0.1:{self.port}/{name}"


class RedisServer:
    """A throwaway ``redis-server`` without persistence: ``start()``, ``restart()``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (bin/services.sh installs it)")
        self.process = subprocess.Popen(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
                "--logfile",
                str(self.directory / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, 30)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=15)

    def restart(self) -> None:
        """Kill and start again on the same port: every connection breaks, data is gone."""
        self.stop()
        self.start()
