"""``bin/run``, the README's command, in a clean copy of the repository.

The copy holds exactly the repository's files (no database, no ``.venv``). To stay fast
the test points ``EXAMPLE_VENV`` at the virtual environment running the tests instead of
letting ``bin/run`` build ``.venv`` from scratch; everything else (the install step,
migrations, the demo login, the server) runs as a first-time user would see it.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from example_project.tests.servers import REPO_ROOT, wait_until_serving

START_TIMEOUT = 180.0


def repository_copy(destination: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RunCommand:
    def __init__(self, checkout: Path, port: int) -> None:
        self.checkout = checkout
        self.port = port
        self.output = checkout / f"bin-run-{time.monotonic_ns()}.log"
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"DATABASE_URL", "REDIS_URL", "OPENAI_API_KEY", "PYTHONPATH"}
            and not key.startswith("DJANGO_")
        }
        env.update(EXAMPLE_VENV=sys.prefix, PORT=str(port), DEMO_MODEL_DELAY="0")
        with self.output.open("wb") as log:
            # A session of its own, so that stop() reaches runserver's reloader child too.
            self.process = subprocess.Popen(
                ["bin/run"],
                cwd=checkout,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.output.read_text(errors="replace")

    def wait_until_serving(self) -> None:
        problem = wait_until_serving(self.url, self.process, START_TIMEOUT, poll=0.5)
        if problem is not None:
            self.stop()
            pytest.fail(f"bin/run {problem}:\n{self.log()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)  # Ctrl+C, as a user stops it
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)


def log_in_and_open_chat(url: str, username: str, password: str) -> str:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(url + "/accounts/login/", timeout=10).read()
    token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    form = urllib.parse.urlencode(
        {"username": username, "password": password, "csrfmiddlewaretoken": token}
    ).encode()
    request = urllib.request.Request(
        url + "/accounts/login/", data=form, headers={"Referer": url + "/accounts/login/"}
    )
    with opener.open(request, timeout=10) as reply:
        assert re.fullmatch(r"/c/[0-9a-f]{32}/", urllib.parse.urlparse(reply.url).path)
        return str(reply.read().decode())


@pytest.mark.timeout(2 * START_TIMEOUT + 60)
def test_bin_run_serves_the_chat_from_a_clean_checkout(tmp_path):
    checkout = repository_copy(tmp_path / "checkout")
    assert not (checkout / "db.sqlite3").exists()

    first = RunCommand(checkout, free_port())
    try:
        first.wait_until_serving()
        assert "Demo login: demo / demo" in first.log()
        assert f"http://127.0.0.1:{first.port}/" in first.log()
        page = log_in_and_open_chat(first.url, "demo", "demo")
        assert "data-socket-path=" in page
        assert 'href="/admin/"' in page
    finally:
        first.stop()
    assert (checkout / "db.sqlite3").exists()
    assert not (checkout / ".venv").exists(), "EXAMPLE_VENV was used"

    # Running it again reuses the database and the login.
    again = RunCommand(checkout, free_port())
    try:
        again.wait_until_serving()
        assert "Demo login: demo / demo (created earlier" in again.log()
        log_in_and_open_chat(again.url, "demo", "demo")
    finally:
        again.stop()
