"""Live daphne servers running the example project, for the browser tests.

Each server is a real ``daphne example_project.asgi:application`` process in
production mode (DEBUG off) on 127.0.0.1, started warm (``tests/warm_start.py``). The test
process binds the listening socket and hands it to daphne (``--fd``), so the port is known
before daphne starts, no other process can take it in between, and a restarted daphne
comes back on the same address.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from example_project.tests import migrated
from tests import warm_start
from tests.services import PostgresServer

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0
DAPHNE = ["-m", "daphne", "-v", "1"]
# A plain ASGI server (no Channels involved in serving): the SSE transport's.
UVICORN = ["-m", "uvicorn", "--log-level", "warning", "--no-access-log"]


def wait_until_serving(
    url: str, process: warm_start.Process, timeout: float, poll: float = 0.2
) -> str | None:
    """Poll ``url``'s login page until it answers 200; None then, else what went wrong."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return f"exited with {process.returncode}"
        try:
            with urllib.request.urlopen(url + "/accounts/login/", timeout=5) as reply:
                if reply.status == 200:
                    return None
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(poll)
    return f"did not answer in {timeout}s"


def database_url(database: dict[str, Any]) -> str:
    """A DATABASE_URL for the (already created) test database in ``database``."""
    engine = database["ENGINE"]
    if engine.endswith("sqlite3"):
        return "sqlite:///" + str(Path(database["NAME"]).resolve())
    if engine.endswith("postgresql"):
        user = quote(database.get("USER") or "", safe="")
        password = quote(database.get("PASSWORD") or "", safe="")
        credentials = f"{user}:{password}@" if password else f"{user}@"
        host, port = database.get("HOST") or "127.0.0.1", database.get("PORT") or "5432"
        return f"postgres://{credentials}{host}:{port}/{database['NAME']}"
    raise ValueError(f"no DATABASE_URL form for {engine}")


class DaphneServer:
    """One daphne worker of the example project; ``start()``, ``stop()``, ``restart()``."""

    def __init__(self, name: str, log_dir: Path, env: dict[str, str]) -> None:
        self.name = name
        self.log_path = log_dir / f"daphne-{name}.log"
        self.env = env
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.port = self.listener.getsockname()[1]
        self.process: warm_start.Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    command = DAPHNE

    def start(self) -> None:
        self.spawn()
        self.wait_until_ready()

    def spawn(self) -> None:
        self.process = warm_start.start(
            [*self.command, "--fd", warm_start.LISTENER_FD, "example_project.asgi:application"],
            env=self.env,
            cwd=REPO_ROOT,
            output=self.log_path,
            listener=self.listener,
        )

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        self.listener.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_until_ready(self) -> None:
        assert self.process is not None
        problem = wait_until_serving(self.url, self.process, START_TIMEOUT)
        if problem is not None:
            self.stop()
            raise RuntimeError(f"daphne {self.name} {problem}:\n{self.log()}")


def start_all(servers: Sequence[DaphneServer]) -> None:
    """Start ``servers`` at once (each takes seconds to import), then wait for each."""
    for server in servers:
        server.spawn()
    for server in servers:
        server.wait_until_ready()


class UvicornServer(DaphneServer):
    """One uvicorn worker of the example project, started and stopped as daphne's."""

    command = UVICORN


def server_environment(database_url: str, **extra: str) -> dict[str, str]:
    """The example project's production-mode environment, on the test database."""
    env = {
        key: value  # a developer's own settings must not leak into the servers under test
        for key, value in os.environ.items()
        if key not in {"OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_MODEL", "REDIS_URL"}
        and not key.startswith("DJANGO_")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="example_project.settings",
        PYTHONPATH=str(REPO_ROOT),
        DATABASE_URL=database_url,
        MEDIA_ROOT=str(Path(tempfile.gettempdir()) / f"das-media-{os.getpid()}"),  # not the repo
        DEBUG="0",
        SECRET_KEY="browser-tests-only",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SECURE_COOKIES="0",  # plain http on loopback
        DEMO_MODEL_DELAY="0.01",
        DEMO_TITLES="0",  # a title frame and a retitled list would perturb other tests
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",  # access log lines reach the log file at once
    )
    env.update(extra)
    return env


class ServerDatabase:
    """A migrated database of its own for the servers under test (a copy of a template
    ``manage.py migrate`` made: ``migrated.py``).

    ``backend`` None follows the run's test database (``AGENT_SESSIONS_TEST_DB``): a
    SQLite file, or a new PostgreSQL database on the test server (libpq's ``PG*``
    variables), dropped afterwards. It lives outside pytest-django's test database
    because the browser tests' thread has Playwright's event loop running, where Django
    refuses ORM calls.
    """

    def __init__(self, directory: Path, backend: str | None = None) -> None:
        from django.conf import settings

        backend = backend or settings.TEST_DB
        if backend == "postgres":
            self.postgres = True
            self.config = {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": f"example_e2e_{os.getpid()}_{uuid.uuid4().hex[:8]}",
                "USER": os.environ.get("PGUSER", "postgres"),
                "PASSWORD": os.environ.get("PGPASSWORD", ""),
                "HOST": os.environ.get("PGHOST", "127.0.0.1"),
                "PORT": os.environ.get("PGPORT", "5432"),
            }
            template = migrated.postgres_template(self._maintenance, self._url_of, _migrate)
            self._maintenance(f'CREATE DATABASE "{self.config["NAME"]}" TEMPLATE "{template}"')
        else:
            self.postgres = False
            self.config = {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": str(directory / "example.sqlite3"),
            }
            migrated.sqlite_copy(Path(self.config["NAME"]), _migrate)
        self.url = database_url(self.config)

    def _url_of(self, name: str) -> str:
        return database_url({**self.config, "NAME": name})

    def drop(self) -> None:
        if self.postgres:
            self._maintenance(f'DROP DATABASE IF EXISTS "{self.config["NAME"]}" WITH (FORCE)')

    def _maintenance(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(
            host=self.config.get("HOST") or "127.0.0.1",
            port=self.config.get("PORT") or "5432",
            user=self.config.get("USER") or None,
            password=self.config.get("PASSWORD") or None,
            dbname="postgres",
            autocommit=True,
        ) as connection:
            connection.execute(sql.encode())


def _migrate(url: str) -> None:
    manage(server_environment(url), "migrate", "--no-input", "-v", "0")


def start_migrated_postgres(server: PostgresServer) -> str:
    """Start a PostgreSQL server of the test's own (``tests.services.PostgresServer``)
    holding the migrated database ``example``; its ``DATABASE_URL``."""
    return migrated.start_postgres(server, _migrate)


def manage(env: dict[str, str], *args: str) -> str:
    """Run ``manage.py`` with the servers' environment; its output, or a clear failure."""
    code, output = warm_start.run(["manage.py", *args], env=env, cwd=REPO_ROOT, timeout=120)
    if code != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{output}")
    return output


# A superuser, as ``manage.py ensure_demo_user`` makes the demo login; an existing one
# gets the new password. The few iterations keep the test fast; the server upgrades the
# hash at the first login, as it would any hash with fewer iterations than its own.
_INSERT_USER = (
    "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,"
    " is_staff, is_active, date_joined) VALUES ({p}, TRUE, {p}, '', '', '', TRUE, TRUE, {now})"
    " ON CONFLICT (username) DO UPDATE SET password = excluded.password"
)


def create_user(env: dict[str, str], username: str = "") -> tuple[str, str]:
    """A new login on the servers' database, written into it directly.

    (Through ``manage.py`` each login cost a process start: about 4 s.)
    """
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    username = username or f"user-{uuid.uuid4().hex[:8]}"
    password = f"pw-{uuid.uuid4().hex}"
    hashed = PBKDF2PasswordHasher().encode(password, uuid.uuid4().hex, iterations=1000)
    url = env["DATABASE_URL"]
    if url.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db, db:
            db.execute(
                _INSERT_USER.format(p="?", now="strftime('%Y-%m-%d %H:%M:%f', 'now')"),
                (hashed, username),
            )
    else:
        import psycopg

        with psycopg.connect(url, autocommit=True) as server:
            server.execute(_INSERT_USER.format(p="%s", now="now()").encode(), (hashed, username))
    return username, password


def query(env: dict[str, str], sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (``%s`` placeholders) on the servers' database."""
    url = env["DATABASE_URL"]
    if url.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db:
            return db.execute(sql.replace("%s", "?"), params).fetchall()
    import psycopg

    with psycopg.connect(url) as server:
        return server.execute(sql.encode(), params).fetchall()
